#include "broker/transaction/transaction_log.h"

namespace runnel::broker::transaction {

std::optional<Bytes> key_to_bytes(const std::string& transactional_id) { return encode_key({transactional_id}); }

std::optional<TransactionLogValue> to_log_value(const TxnTransitMetadata& transit) {
  const bool empty = transit.txn_state == TransactionState::empty;
  if (empty && !transit.topic_partitions.empty()) return std::nullopt;
  TransactionLogValue v;
  v.producer_id = transit.producer_id;
  v.producer_epoch = transit.producer_epoch;
  v.transaction_timeout_ms = transit.txn_timeout_ms;
  v.transaction_status = state_id(transit.txn_state);
  v.transaction_last_update_timestamp_ms = transit.txn_last_update_timestamp;
  v.transaction_start_timestamp_ms = transit.txn_start_timestamp;
  v.client_transaction_version = feature_level(transit.client_transaction_version);
  if (!empty) {
    // Kafka groups by topic in hash order; any order reads back the same.
    v.transaction_partitions.emplace();
    for (const auto& tp : transit.topic_partitions) {
      if (v.transaction_partitions->empty() || v.transaction_partitions->back().topic != tp.topic)
        v.transaction_partitions->push_back({tp.topic, {}});
      v.transaction_partitions->back().partition_ids.push_back(tp.partition);
    }
  }
  return v;
}

std::optional<Bytes> value_to_bytes(const TxnTransitMetadata& transit, TransactionVersion level) {
  auto v = to_log_value(transit);
  if (!v) return std::nullopt;
  return encode_value(*v, transaction_log_value_version(level));  // nullopt: a TV_2 client on a TV_0 cluster
}

Decoded<TransactionMetadata> metadata_from_log_value(const std::string& transactional_id,
                                                     const TransactionLogValue& value) {
  auto state = transaction_state_from_id(value.transaction_status);
  if (!state)
    return {std::nullopt, "Unknown transaction state id " + std::to_string(value.transaction_status) +
                              " from the transaction status message"};
  auto client_version = transaction_version_from_level(value.client_transaction_version);
  if (!client_version)
    return {std::nullopt, "Unknown transaction.version " + std::to_string(value.client_transaction_version)};
  TransactionMetadata m;
  m.transactional_id = transactional_id;
  m.producer_id = value.producer_id;
  m.prev_producer_id = value.previous_producer_id;
  m.next_producer_id = value.next_producer_id;
  m.producer_epoch = value.producer_epoch;
  m.last_producer_epoch = kNoProducerEpoch;
  m.txn_timeout_ms = value.transaction_timeout_ms;
  m.state = *state;
  m.txn_start_timestamp = value.transaction_start_timestamp_ms;
  m.txn_last_update_timestamp = value.transaction_last_update_timestamp_ms;
  m.client_transaction_version = *client_version;
  if (m.state != TransactionState::empty) {
    if (!value.transaction_partitions) return {std::nullopt, "null partitions in state " + std::string(state_name(m.state))};
    for (const auto& p : *value.transaction_partitions)
      for (int32_t id : p.partition_ids) m.topic_partitions.insert({p.topic, id});
  }
  return {std::move(m), {}};
}

}  // namespace runnel::broker::transaction
