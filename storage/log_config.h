// The Kafka topic configs that storage honours, typed, with Kafka's
// defaults. Storage knows no config names: the broker parses and validates
// topic configs and their broker-level synonyms against its one definition
// table (broker/config_def.h) and builds this from it.
#pragma once

#include <cstdint>

namespace runnel::storage {

enum class TimestampType : uint8_t { create_time, log_append_time };

struct LogConfig {
  int32_t segment_bytes = 1 << 30;               // segment.bytes: roll when the active segment would exceed it
  int64_t segment_ms = 7LL * 24 * 3600 * 1000;   // segment.ms: roll when the first batch is this old
  int64_t segment_jitter_ms = 0;                 // segment.jitter.ms: random amount subtracted from segment.ms
  int32_t segment_index_bytes = 10 << 20;        // segment.index.bytes: preallocated size of each index
  int32_t index_interval_bytes = 4096;           // index.interval.bytes: bytes between offset index entries
  int64_t retention_ms = 7LL * 24 * 3600 * 1000; // retention.ms: -1 keeps forever
  int64_t retention_bytes = -1;                  // retention.bytes: per partition, -1 unlimited
  int64_t flush_messages = INT64_MAX;            // flush.messages: fsync after this many unflushed records
  int64_t flush_ms = INT64_MAX;                  // flush.ms: fsync when the last flush is this old
  int64_t file_delete_delay_ms = 60000;          // file.delete.delay.ms: grace before deleted files go
  TimestampType message_timestamp_type = TimestampType::create_time;  // message.timestamp.type
  bool cleanup_delete = true;                    // cleanup.policy contains "delete"
  bool cleanup_compact = false;                  // cleanup.policy contains "compact"
  bool preallocate = false;                      // preallocate: size new .log files to segment.bytes
  // Read by the log cleaner (compaction).
  int64_t delete_retention_ms = 86400000;        // delete.retention.ms: how long tombstones stay
  double min_cleanable_dirty_ratio = 0.5;        // min.cleanable.dirty.ratio
  int64_t min_compaction_lag_ms = 0;             // min.compaction.lag.ms
  int64_t max_compaction_lag_ms = INT64_MAX;     // max.compaction.lag.ms

  bool operator==(const LogConfig&) const = default;
};

}  // namespace runnel::storage
