#include "broker/transaction/transaction_metadata.h"

#include <algorithm>

namespace runnel::broker::transaction {

namespace {

using S = TransactionState;
using protocol::ErrorCode;

TransitionError illegal(std::string message) { return {ErrorCode::unknown_server_error, std::move(message)}; }

std::string name(TransactionState s) { return std::string(state_name(s)); }

bool is_empty_or_complete(TransactionState s) {
  return s == S::empty || s == S::complete_commit || s == S::complete_abort;
}

// The fields a prepare call changes; Kafka's prepareTransitionTo arguments.
// prev_producer_id is not among them: it is always the current producer id.
struct Target {
  TransactionState state;
  int64_t producer_id;
  int64_t next_producer_id;
  int16_t producer_epoch;
  int16_t last_producer_epoch;
  int32_t txn_timeout_ms;
  std::set<TopicPartition> topic_partitions;
  int64_t txn_start_timestamp;
  int64_t txn_last_update_timestamp;
  TransactionVersion client_transaction_version;
};

// A target that keeps everything but the state.
Target unchanged(const TransactionMetadata& m, TransactionState to) {
  return {to,
          m.producer_id,
          m.next_producer_id,
          m.producer_epoch,
          m.last_producer_epoch,
          m.txn_timeout_ms,
          m.topic_partitions,
          m.txn_start_timestamp,
          m.txn_last_update_timestamp,
          m.client_transaction_version};
}

TransitResult prepare_transition_to(TransactionMetadata& m, Target t) {
  if (m.pending_state)
    return illegal("Preparing transaction state transition to " + name(t.state) + " while it already a pending state " +
                   name(*m.pending_state));
  if (t.producer_id < 0) return illegal("Illegal new producer id " + std::to_string(t.producer_id));
  // A new id's epoch is NO_PRODUCER_EPOCH and may stay so until it expires.
  if (t.state != S::dead && t.producer_epoch < 0)
    return illegal("Illegal new producer epoch " + std::to_string(t.producer_epoch));
  if (!is_valid_previous_state(t.state, m.state))
    return illegal("Preparing transaction state transition to " + name(t.state) + " failed since the target state " +
                   name(t.state) + " is not a valid previous state of the current state " + name(m.state));
  m.pending_state = t.state;
  return TxnTransitMetadata{t.producer_id,
                            m.producer_id,
                            t.next_producer_id,
                            t.producer_epoch,
                            t.last_producer_epoch,
                            t.txn_timeout_ms,
                            t.state,
                            std::move(t.topic_partitions),
                            t.txn_start_timestamp,
                            t.txn_last_update_timestamp,
                            t.client_transaction_version};
}

// The producer id and epoch a transit may carry (Kafka's validProducerEpoch):
// under TV_2 a Prepare* bumped the epoch, so its last epoch is the current
// one; a Complete* at epoch 0 moved to the next producer id, keeping the last
// epoch. Otherwise both are unchanged.
bool valid_producer_epoch(const TransactionMetadata& m, const TxnTransitMetadata& t) {
  const bool tv2 = supports_epoch_bump(t.client_transaction_version);
  if (tv2 && (t.txn_state == S::complete_commit || t.txn_state == S::complete_abort) && t.producer_epoch == 0)
    return t.last_producer_epoch == m.last_producer_epoch && t.prev_producer_id == m.producer_id;
  if (tv2 && (t.txn_state == S::prepare_commit || t.txn_state == S::prepare_abort))
    return t.last_producer_epoch == m.producer_epoch && t.producer_id == m.producer_id;
  return t.producer_epoch == m.producer_epoch && t.producer_id == m.producer_id;
}

bool valid_producer_epoch_bump(const TransactionMetadata& m, const TxnTransitMetadata& t) {
  return t.producer_epoch == m.producer_epoch + 1 || (t.producer_epoch == 0 && t.producer_id != m.producer_id);
}

// What completeTransitionTo checks of each target state.
bool valid_transit(const TransactionMetadata& m, const TxnTransitMetadata& t) {
  switch (t.txn_state) {
    case S::empty:  // InitProducerId
      return (m.producer_epoch == t.producer_epoch || valid_producer_epoch_bump(m, t)) && t.topic_partitions.empty() &&
             t.txn_start_timestamp == -1;
    case S::ongoing:  // AddPartitionsToTxn
      return valid_producer_epoch(m, t) && t.txn_timeout_ms == m.txn_timeout_ms &&
             std::includes(t.topic_partitions.begin(), t.topic_partitions.end(), m.topic_partitions.begin(),
                           m.topic_partitions.end());
    case S::prepare_commit:
    case S::prepare_abort: {  // EndTxn; a TV_2 abort may start a transaction of its own
      const bool empty_abort = t.txn_state == S::prepare_abort && supports_epoch_bump(t.client_transaction_version) &&
                               is_empty_or_complete(m.state);
      return valid_producer_epoch(m, t) && m.topic_partitions == t.topic_partitions &&
             m.txn_timeout_ms == t.txn_timeout_ms && (m.txn_start_timestamp == t.txn_start_timestamp || empty_abort);
    }
    case S::complete_commit:
    case S::complete_abort:  // markers written
      return valid_producer_epoch(m, t) && m.txn_timeout_ms == t.txn_timeout_ms && t.txn_start_timestamp != -1;
    case S::prepare_epoch_fence:  // always followed by PrepareAbort, never completed
    case S::dead:                 // an expired id is removed, never completed
      return false;
  }
  return false;
}

}  // namespace

TxnTransitMetadata TransactionMetadata::prepare_no_transit() const {
  return {producer_id,    prev_producer_id,    next_producer_id,    producer_epoch,
          last_producer_epoch, txn_timeout_ms, state,               topic_partitions,
          txn_start_timestamp, txn_last_update_timestamp, client_transaction_version};
}

TransitResult TransactionMetadata::prepare_fence_producer_epoch() {
  if (producer_epoch == INT16_MAX)
    return illegal("Cannot fence producer with epoch equal to Short.MaxValue since this would overflow");
  Target t = unchanged(*this, S::prepare_epoch_fence);
  if (!has_failed_epoch_fence) t.producer_epoch = static_cast<int16_t>(producer_epoch + 1);
  t.last_producer_epoch = kNoProducerEpoch;
  return prepare_transition_to(*this, std::move(t));
}

TransitResult TransactionMetadata::prepare_increment_producer_epoch(int32_t new_txn_timeout_ms,
                                                                    std::optional<int16_t> expected_producer_epoch,
                                                                    int64_t update_timestamp) {
  if (is_producer_epoch_exhausted())
    return illegal("Cannot allocate any more producer epochs for producerId " + std::to_string(producer_id));
  // A new producer (epoch -1) starts at 0.
  const auto bumped = static_cast<int16_t>(producer_epoch + 1);
  Target t = unchanged(*this, S::empty);
  if (!expected_producer_epoch) {
    // A new producer instance: fence every older one.
    t.producer_epoch = bumped;
    t.last_producer_epoch = kNoProducerEpoch;
  } else if (producer_epoch == kNoProducerEpoch || *expected_producer_epoch == producer_epoch) {
    // The same producer recovering from an error: bump, remembering the epoch
    // it had so that a retry of this call is recognised.
    t.producer_epoch = bumped;
    t.last_producer_epoch = producer_epoch;
  } else if (*expected_producer_epoch == last_producer_epoch) {
    // A retry of a call that succeeded: the current epoch again.
  } else {
    return TransitionError{ErrorCode::producer_fenced,
                           "Expected producer epoch " + std::to_string(*expected_producer_epoch) +
                               " does not match current producer epoch " + std::to_string(producer_epoch) +
                               " or previous producer epoch " + std::to_string(last_producer_epoch)};
  }
  t.txn_timeout_ms = new_txn_timeout_ms;
  t.topic_partitions.clear();
  t.txn_start_timestamp = -1;
  t.txn_last_update_timestamp = update_timestamp;
  return prepare_transition_to(*this, std::move(t));
}

TransitResult TransactionMetadata::prepare_producer_id_rotation(int64_t new_producer_id, int32_t new_txn_timeout_ms,
                                                                int64_t update_timestamp, bool record_last_epoch) {
  if (state == S::ongoing || state == S::prepare_abort || state == S::prepare_commit)
    return illegal("Cannot rotate producer ids while a transaction is still pending");
  Target t = unchanged(*this, S::empty);
  t.producer_id = new_producer_id;
  t.producer_epoch = 0;
  t.last_producer_epoch = record_last_epoch ? producer_epoch : kNoProducerEpoch;
  t.txn_timeout_ms = new_txn_timeout_ms;
  t.topic_partitions.clear();
  t.txn_start_timestamp = -1;
  t.txn_last_update_timestamp = update_timestamp;
  return prepare_transition_to(*this, std::move(t));
}

TransitResult TransactionMetadata::prepare_add_partitions(const std::set<TopicPartition>& added_partitions,
                                                          int64_t update_timestamp,
                                                          TransactionVersion client_version) {
  Target t = unchanged(*this, S::ongoing);
  if (is_empty_or_complete(state)) t.txn_start_timestamp = update_timestamp;
  t.topic_partitions.insert(added_partitions.begin(), added_partitions.end());
  t.txn_last_update_timestamp = update_timestamp;
  t.client_transaction_version = client_version;
  return prepare_transition_to(*this, std::move(t));
}

TransitResult TransactionMetadata::prepare_abort_or_commit(TransactionState new_state, TransactionVersion client_version,
                                                           int64_t new_next_producer_id, int64_t update_timestamp,
                                                           bool no_partition_added) {
  Target t = unchanged(*this, new_state);
  if (supports_epoch_bump(client_version)) {
    // TV_2: every EndTxn bumps the epoch, so a late write of the old epoch is
    // fenced. From Short.MaxValue this wraps negative and is refused.
    t.producer_epoch = static_cast<int16_t>(producer_epoch + 1);
    t.last_producer_epoch = producer_epoch;
  }
  if (no_partition_added) t.txn_start_timestamp = update_timestamp;
  t.next_producer_id = new_next_producer_id;
  t.txn_last_update_timestamp = update_timestamp;
  t.client_transaction_version = client_version;
  return prepare_transition_to(*this, std::move(t));
}

TransitResult TransactionMetadata::prepare_complete(int64_t update_timestamp) {
  // The Prepare* state is written, so a failed fence before it no longer matters.
  has_failed_epoch_fence = false;
  Target t = unchanged(*this, state == S::prepare_commit ? S::complete_commit : S::complete_abort);
  if (supports_epoch_bump(client_transaction_version) && next_producer_id != kNoProducerId) {
    // The EndTxn's bump exhausted the epoch: move to the producer id it chose.
    // last_producer_epoch stays the epoch the client last saw.
    t.producer_id = next_producer_id;
    t.producer_epoch = 0;
  }
  t.next_producer_id = kNoProducerId;
  t.topic_partitions.clear();
  t.txn_last_update_timestamp = update_timestamp;
  return prepare_transition_to(*this, std::move(t));
}

TransitResult TransactionMetadata::prepare_dead() {
  Target t = unchanged(*this, S::dead);
  t.topic_partitions.clear();
  return prepare_transition_to(*this, std::move(t));
}

std::optional<TransitionError> TransactionMetadata::complete_transition_to(const TxnTransitMetadata& transit) {
  if (!pending_state)
    return illegal("TransactionalId " + transactional_id +
                   " completing transaction state transition while it does not have a pending state");
  if (*pending_state == transit.txn_state && transit.txn_state == S::dead)
    return illegal("TransactionalId " + transactional_id +
                   " is trying to complete a transition to Dead. This means that the transactionalId was being "
                   "expired, and the only acceptable completion of this operation is to remove the transaction "
                   "metadata from the cache, not to persist the Dead in the log.");
  if (*pending_state != transit.txn_state || !valid_transit(*this, transit))
    return illegal("TransactionalId " + transactional_id + " failed transition to state " + name(transit.txn_state) +
                   " due to unexpected metadata");
  producer_id = transit.producer_id;
  prev_producer_id = transit.prev_producer_id;
  next_producer_id = transit.next_producer_id;
  producer_epoch = transit.producer_epoch;
  last_producer_epoch = transit.last_producer_epoch;
  txn_timeout_ms = transit.txn_timeout_ms;
  topic_partitions = transit.topic_partitions;
  txn_start_timestamp = transit.txn_start_timestamp;
  txn_last_update_timestamp = transit.txn_last_update_timestamp;
  client_transaction_version = transit.client_transaction_version;
  state = transit.txn_state;
  pending_state.reset();
  return std::nullopt;
}

std::optional<TransitionError> TransactionMetadata::remove_partition(const TopicPartition& partition) {
  if (state != S::prepare_commit && state != S::prepare_abort)
    return illegal("Transaction metadata's current state is " + name(state) +
                   " while trying to remove partitions whose txn marker has been sent, this is not expected");
  topic_partitions.erase(partition);
  return std::nullopt;
}

}  // namespace runnel::broker::transaction
