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
// Transactions (Kafka's ProducerStateManager ongoingTxns/unreplicatedTxns):
// a producer's first transactional batch opens its transaction at that
// batch's offset; the COMMIT or ABORT marker its coordinator has the leader
// write closes it (a CompletedTxn, which the partition records in the
// aborted-transaction index when aborted). A completed transaction stays
// "unreplicated" until the high watermark passes its marker. The first
// offset of the oldest open or unreplicated transaction is the first
// unstable offset, which bounds the last stable offset read_committed
// consumers read up to. While its transaction is open a producer may write
// only transactional batches (INVALID_TXN_STATE) and never expires.
//
// The state survives restarts through producer-state snapshots (Kafka's
// <offset>.snapshot files, storage/producer_snapshot.h) and a replay of the
// log after the latest one (replication/partition.cc). A snapshot keeps only a
// producer's last batch, its coordinator epoch and its open transaction's
// first offset, as Kafka's does. Entries idle for producer.id.expiration.ms
// are dropped, as Kafka does, and never written into a snapshot.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "protocol/error_codes.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/control_record.h"
#include "storage/active_producers.h"
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
  int32_t coordinator_epoch = -1;     // of the last marker written for it
  int64_t current_txn_first_offset = -1;  // -1: no transaction open
};

// A transaction in this partition (Kafka's TxnMetadata): open from its
// first batch; `last_offset` is its marker's offset once written.
struct TxnMetadata {
  int64_t producer_id = -1;
  int64_t first_offset = -1;
  int64_t last_offset = -1;
};

// A transaction its marker has just ended (Kafka's CompletedTxn).
struct CompletedTxn {
  int64_t producer_id = -1;
  int64_t first_offset = -1;
  int64_t last_offset = -1;  // the marker's offset
  bool aborted = false;
  bool operator==(const CompletedTxn&) const = default;
};

struct SequenceCheck {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  const BatchMetadata* duplicate_of = nullptr;  // set when the batch was already appended
};

class ProducerStateTable {
 public:
  static constexpr size_t kBatchesToRetain = 5;

  // Decides what to do with a client batch that carries a producer id. A
  // coordinator's batch (a TxnOffsetCommit's records, `from_client` false)
  // has only its epoch checked, as Kafka checks sequences of client
  // appends alone: each such batch starts at sequence 0.
  SequenceCheck check(const protocol::records::BatchHeader& batch, bool from_client = true) const;
  // The producer has a transaction open here at this epoch: its next
  // transactional write needs no verification with the coordinator (Kafka's
  // hasOngoingTransaction).
  bool has_ongoing_txn(int64_t producer_id, int16_t producer_epoch) const;
  // KIP-890's VerificationGuard (Kafka's VerificationStateEntry): a
  // Produce that asks the coordinator whether the producer's transaction
  // has this partition takes a guard first, and its append is refused
  // unless the guard is still the producer's. Any transactional batch or
  // marker appended for the producer meanwhile clears it, so a transaction
  // that ended (an abort's marker) between the question and the append
  // cannot be reopened by a write nobody will end. The same guard is
  // returned while one is held.
  uint64_t start_verification(int64_t producer_id, int64_t now_ms);
  // Whether `guard` is the producer's current one (0, no verification, never is).
  bool verified(int64_t producer_id, uint64_t guard) const;

  // Records an appended data batch (its offsets assigned); also used by
  // replay. A transactional batch opens its producer's transaction if none is.
  void update(const protocol::records::BatchHeader& batch, int64_t first_offset, int64_t timestamp);

  // Kafka's checks of a marker the coordinator writes (appendEndTxnMarker):
  // INVALID_PRODUCER_EPOCH for an epoch older than the producer's (under
  // transaction version 2, where the coordinator bumps the epoch before
  // each marker, also an equal one, unless no transaction is open: the
  // retry of a marker already written); TRANSACTION_COORDINATOR_FENCED for
  // a coordinator epoch older than the last marker's.
  protocol::ErrorCode check_marker(int64_t producer_id, int16_t producer_epoch,
                                   const protocol::records::EndTxnMarker& marker, int8_t transaction_version) const;
  // Records an appended marker at `offset`: the producer takes its epoch
  // and coordinator epoch, and its open transaction, if any, ends. Markers
  // from replication or replay are applied unchecked, as Kafka's are.
  std::optional<CompletedTxn> update_marker(int64_t producer_id, int16_t producer_epoch,
                                            const protocol::records::EndTxnMarker& marker, int64_t offset,
                                            int64_t timestamp);
  // Kafka's lastStableOffset(completedTxn), the last stable offset an
  // aborted-transaction index entry records: the first offset of the
  // oldest transaction open by another producer, else the marker's offset + 1.
  int64_t last_stable_offset(const CompletedTxn& txn) const;
  // Kafka's completeTxn: after the index entry is written, the transaction
  // waits for the high watermark to pass its marker.
  void complete_txn(const CompletedTxn& txn);
  // Kafka's onHighWatermarkUpdated: completed transactions whose marker is
  // below `high_watermark` no longer hold the last stable offset back.
  void on_high_watermark_updated(int64_t high_watermark);
  // The first offset of the oldest open or unreplicated transaction.
  std::optional<int64_t> first_unstable_offset() const;
  // Open transactions by first offset (DescribeProducers, tests).
  const std::map<int64_t, TxnMetadata>& ongoing_txns() const { return ongoing_; }

  // Drops producers whose last batch is `expiration_ms` or more before
  // `now_ms` and that have no transaction open (Kafka's
  // removeExpiredProducers and isProducerExpired), and verification guards
  // taken that long ago.
  void expire(int64_t now_ms, int64_t expiration_ms);
  static bool is_expired(const ProducerEntry& entry, int64_t now_ms, int64_t expiration_ms) {
    return entry.current_txn_first_offset < 0 && now_ms - entry.last_timestamp >= expiration_ms;
  }

  // The unexpired producers as snapshot entries, by producer id.
  std::vector<storage::ProducerSnapshotEntry> snapshot_entries(int64_t now_ms, int64_t expiration_ms) const;
  // Restores one producer from a snapshot: its epoch, its last batch, its
  // coordinator epoch and its open transaction.
  void load(const storage::ProducerSnapshotEntry& entry);
  void clear() {
    if (mirror_) mirror_->clear();
    producers_.clear();
    ongoing_.clear();
    unreplicated_.clear();
    verifications_.clear();
  }

  // Keeps `mirror` (the log's, for its cleaner) in step with every
  // producer's last data offset and epoch from now on; null stops it.
  void mirror_to(storage::ActiveProducers* mirror);

  const ProducerEntry* find(int64_t producer_id) const;
  size_t size() const { return producers_.size(); }
  // Every producer with state here (DescribeProducers' active producers).
  const std::unordered_map<int64_t, ProducerEntry>& entries() const { return producers_; }

 private:
  // The epoch and sequence rules of check(), for a producer with state.
  static SequenceCheck check_sequence(const ProducerEntry& entry, const protocol::records::BatchHeader& batch);
  void mirror(int64_t producer_id, const ProducerEntry& entry);

  std::unordered_map<int64_t, ProducerEntry> producers_;
  // By first offset, so the oldest is first.
  std::map<int64_t, TxnMetadata> ongoing_;
  std::map<int64_t, TxnMetadata> unreplicated_;
  struct Verification {
    uint64_t guard = 0;
    int64_t since_ms = 0;
  };
  std::unordered_map<int64_t, Verification> verifications_;
  uint64_t next_guard_ = 1;
  storage::ActiveProducers* mirror_ = nullptr;
};

}  // namespace runnel::broker
