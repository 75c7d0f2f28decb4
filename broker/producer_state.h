// Idempotent producers: per partition, the epoch of each producer id and the
// metadata of its last five batches (Kafka's ProducerStateManager and
// ProducerStateEntry, NUM_BATCHES_TO_RETAIN = 5, the reason clients cap
// in-flight requests at five).
//
// Before a batch carrying a producer id is appended, check() decides, in
// Kafka's order: a duplicate of a retained batch (same epoch, same first and
// last sequence) is acknowledged with its original offsets and not appended;
// an older epoch is INVALID_PRODUCER_EPOCH; a new epoch must start at
// sequence 0 and the same epoch must continue at last sequence + 1 (0 after
// INT32_MAX), else OUT_OF_ORDER_SEQUENCE_NUMBER; a producer with no state
// (new, expired, or older than the log) is accepted at any sequence.
// After the append, update() records the batch.
//
// The state survives restarts through producer-state snapshots (Kafka's
// <offset>.snapshot files, storage/producer_snapshot.h) and a replay of the
// log after the latest one (replication/partition.cc). A snapshot keeps only a
// producer's last batch, as Kafka's does. Entries idle for
// producer.id.expiration.ms are dropped, as Kafka does, and never written
// into a snapshot.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

#include "protocol/error_codes.h"
#include "protocol/records/batch_format.h"
#include "storage/producer_snapshot.h"

namespace runnel::broker {

struct BatchMetadata {
  int32_t first_seq = 0;
  int32_t last_seq = 0;
  int64_t first_offset = 0;
  int64_t last_offset = 0;
  int64_t timestamp = -1;  // the batch's max timestamp, or the append time
};

struct ProducerEntry {
  int16_t epoch = -1;
  std::deque<BatchMetadata> batches;  // oldest first, at most kBatchesToRetain
  int64_t last_timestamp = -1;        // of the latest batch, for expiration
};

struct SequenceCheck {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  const BatchMetadata* duplicate_of = nullptr;  // set when the batch was already appended
};

class ProducerStateTable {
 public:
  static constexpr size_t kBatchesToRetain = 5;

  // Decides what to do with a client batch that carries a producer id.
  SequenceCheck check(const protocol::records::BatchHeader& batch) const;
  // Records an appended batch (its offsets assigned); also used by replay.
  void update(const protocol::records::BatchHeader& batch, int64_t first_offset, int64_t timestamp);
  // Drops producers whose last batch is `expiration_ms` or more before
  // `now_ms` (Kafka's removeExpiredProducers).
  void expire(int64_t now_ms, int64_t expiration_ms);
  static bool is_expired(const ProducerEntry& entry, int64_t now_ms, int64_t expiration_ms) {
    return now_ms - entry.last_timestamp >= expiration_ms;
  }

  // The unexpired producers as snapshot entries, by producer id.
  std::vector<storage::ProducerSnapshotEntry> snapshot_entries(int64_t now_ms, int64_t expiration_ms) const;
  // Restores one producer from a snapshot: its epoch and its last batch.
  void load(const storage::ProducerSnapshotEntry& entry);
  void clear() { producers_.clear(); }

  const ProducerEntry* find(int64_t producer_id) const;
  size_t size() const { return producers_.size(); }

 private:
  std::unordered_map<int64_t, ProducerEntry> producers_;
};

}  // namespace runnel::broker
