// The Kafka topic configs that storage honours, by their Kafka names and
// with Kafka's defaults. A broker-level `log.*` default maps onto the same
// field (e.g. log.segment.bytes -> segment.bytes); the broker does that
// mapping, storage only sees topic names.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "storage/errors.h"

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

  // Sets one config by its Kafka name from its string form, with Kafka's
  // validation; invalid_config for an unknown name or a bad value.
  std::error_code set(std::string_view name, std::string_view value);
  // The string form Kafka would show for `name`, empty if unknown.
  std::string get(std::string_view name) const;

  // `defaults` with every entry of `props` applied.
  static Result<LogConfig> from_properties(const std::map<std::string, std::string>& props,
                                           const LogConfig& defaults);
  static Result<LogConfig> from_properties(const std::map<std::string, std::string>& props);
  // The names above, in the order they are listed.
  static const std::vector<std::string_view>& names();

  bool operator==(const LogConfig&) const = default;
};

}  // namespace runnel::storage
