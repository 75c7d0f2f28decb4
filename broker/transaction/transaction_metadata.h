// One transactional id's state, as Kafka 4.1's TransactionMetadata
// (core kafka/coordinator/transaction/TransactionMetadata.scala) and its
// TxnTransitMetadata: a plain value the coordinator keeps one of per id.
//
// A change is made in two steps, so that nothing is applied before
// __transaction_state holds it: a prepare_* call checks the change is legal,
// records the target state as pending_state and returns the transit; the
// coordinator writes the transit (transaction_log.h) and, once the write is
// replicated, calls complete_transition_to, which checks the transit again and
// applies it. If the write fails the coordinator clears pending_state.
//
// Where Kafka throws IllegalStateException or IllegalArgumentException (a bug,
// or a race the coordinator should have ruled out: it answers
// CONCURRENT_TRANSACTIONS while pending_state is set) these return a
// TransitionError with unknown_server_error; the one expected refusal is
// prepare_increment_producer_epoch's producer_fenced.
//
// The coordinator picks the call (TransactionCoordinator.scala):
//   InitProducerId on Empty/Complete*: prepare_producer_id_rotation with a new
//     producer id when is_producer_epoch_exhausted() (and the client's epoch,
//     if it sent one, is the current one), else prepare_increment_producer_epoch;
//     on Ongoing: prepare_fence_producer_epoch; its transit is never written
//     or completed: the abort that follows (endTransaction) clears
//     pending_state, takes the fenced epoch with last_producer_epoch -1 and
//     calls prepare_abort_or_commit(prepare_abort, ...).
//   AddPartitionsToTxn: prepare_add_partitions.
//   EndTxn: prepare_abort_or_commit. Under TV_2 the epoch is bumped here; when
//     that bump exhausts the epoch the coordinator passes a new
//     next_producer_id, which prepare_complete moves to with epoch 0.
//   Markers written: prepare_complete. Expiry: prepare_dead (then a tombstone).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>

#include "broker/transaction/transaction_state.h"
#include "broker/transaction/transaction_version.h"
#include "protocol/error_codes.h"
#include "storage/topic_partition.h"

namespace runnel::broker::transaction {

using storage::TopicPartition;

inline constexpr int64_t kNoProducerId = -1;    // RecordBatch.NO_PRODUCER_ID
inline constexpr int16_t kNoProducerEpoch = -1;  // RecordBatch.NO_PRODUCER_EPOCH

// The target of a transition: what is written to __transaction_state and then
// applied (TxnTransitMetadata.java).
struct TxnTransitMetadata {
  int64_t producer_id = kNoProducerId;
  int64_t prev_producer_id = kNoProducerId;  // the producer id before this transition
  int64_t next_producer_id = kNoProducerId;  // TV_2: the id to move to once complete
  int16_t producer_epoch = kNoProducerEpoch;
  int16_t last_producer_epoch = kNoProducerEpoch;
  int32_t txn_timeout_ms = 0;
  TransactionState txn_state = TransactionState::empty;
  std::set<TopicPartition> topic_partitions;
  int64_t txn_start_timestamp = -1;
  int64_t txn_last_update_timestamp = -1;
  TransactionVersion client_transaction_version = TransactionVersion::tv0;
  bool operator==(const TxnTransitMetadata&) const = default;
};

struct TransitionError {
  protocol::ErrorCode error = protocol::ErrorCode::unknown_server_error;
  std::string message;
};

// A prepared transit, or why the transition is refused.
class [[nodiscard]] TransitResult {
 public:
  TransitResult(TxnTransitMetadata transit) : v_(std::move(transit)) {}  // NOLINT: implicit on purpose
  TransitResult(TransitionError error) : v_(std::move(error)) {}         // NOLINT: implicit on purpose

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const TxnTransitMetadata& value() const { return std::get<0>(v_); }
  const TxnTransitMetadata* operator->() const { return &value(); }
  const TransitionError& error() const { return std::get<1>(v_); }

 private:
  std::variant<TxnTransitMetadata, TransitionError> v_;
};

struct TransactionMetadata {
  std::string transactional_id;
  int64_t producer_id = kNoProducerId;
  int64_t prev_producer_id = kNoProducerId;  // the producer id of the last committed transaction
  int64_t next_producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
  int16_t last_producer_epoch = kNoProducerEpoch;  // for retries of InitProducerId and, TV_2, EndTxn
  int32_t txn_timeout_ms = 0;
  TransactionState state = TransactionState::empty;
  std::set<TopicPartition> topic_partitions;
  int64_t txn_start_timestamp = -1;  // when the first partition was added
  int64_t txn_last_update_timestamp = -1;
  TransactionVersion client_transaction_version = TransactionVersion::tv0;
  std::optional<TransactionState> pending_state;  // set between prepare and complete
  // A fence whose write failed: the next fence reuses its epoch, not bumping again.
  bool has_failed_epoch_fence = false;

  // Kafka leaves the last two epochs unused so a producer can always be fenced.
  static bool is_epoch_exhausted(int16_t epoch) { return epoch >= INT16_MAX - 1; }
  bool is_producer_epoch_exhausted() const { return is_epoch_exhausted(producer_epoch); }
  bool pending_transition_in_progress() const { return pending_state.has_value(); }

  // The current state as a transit, without a pending state.
  TxnTransitMetadata prepare_no_transit() const;
  // Bump the epoch (once, however often retried after a failed write) to fence
  // the producer of an Ongoing transaction before it is aborted.
  TransitResult prepare_fence_producer_epoch();
  // InitProducerId: a new epoch, or the current one for a retry that sent the
  // last epoch; producer_fenced for any other expected epoch.
  TransitResult prepare_increment_producer_epoch(int32_t new_txn_timeout_ms,
                                                 std::optional<int16_t> expected_producer_epoch,
                                                 int64_t update_timestamp);
  // InitProducerId with the epoch exhausted: a new producer id at epoch 0.
  TransitResult prepare_producer_id_rotation(int64_t new_producer_id, int32_t new_txn_timeout_ms,
                                             int64_t update_timestamp, bool record_last_epoch);
  TransitResult prepare_add_partitions(const std::set<TopicPartition>& added_partitions, int64_t update_timestamp,
                                       TransactionVersion client_transaction_version);
  // EndTxn: new_state prepare_commit or prepare_abort. `no_partition_added`
  // (a TV_2 abort of an empty transaction) takes update_timestamp as the start.
  TransitResult prepare_abort_or_commit(TransactionState new_state, TransactionVersion client_transaction_version,
                                        int64_t next_producer_id, int64_t update_timestamp,
                                        bool no_partition_added);
  // The markers are written: CompleteCommit or CompleteAbort.
  TransitResult prepare_complete(int64_t update_timestamp);
  TransitResult prepare_dead();

  // Applies a transit written to the log; nullopt when applied. On error
  // nothing changes, pending_state included.
  std::optional<TransitionError> complete_transition_to(const TxnTransitMetadata& transit);

  // A partition whose marker is written, while PrepareCommit/PrepareAbort.
  std::optional<TransitionError> remove_partition(const TopicPartition& partition);
};

}  // namespace runnel::broker::transaction
