#include "broker/transaction/partition_verification.h"

#include "broker/broker.h"
#include "broker/logging.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/messages/24_add_partitions_to_txn.h"

namespace runnel::broker::transaction {

namespace {

using protocol::ErrorCode;
using Partitions = std::set<storage::TopicPartition>;
using Answers = std::map<storage::TopicPartition, ErrorCode>;

ErrorCode passed_on(ErrorCode e, bool transaction_abortable_supported) {
  switch (e) {
    case ErrorCode::producer_fenced:
      return ErrorCode::invalid_producer_epoch;
    case ErrorCode::transaction_abortable:
      return transaction_abortable_supported ? e : ErrorCode::invalid_txn_state;
    case ErrorCode::concurrent_transactions:
    case ErrorCode::network_exception:
    case ErrorCode::coordinator_load_in_progress:
    case ErrorCode::coordinator_not_available:
    case ErrorCode::not_coordinator:
      return ErrorCode::not_enough_replicas;
    default:
      return e;
  }
}

Answers all(const Partitions& partitions, ErrorCode e) {
  Answers out;
  for (const auto& tp : partitions) out[tp] = e;
  return out;
}

// The coordinator's own answer, before passed_on.
awaitable<Answers> ask(Broker& b, const std::string& transactional_id, int64_t producer_id, int16_t producer_epoch,
                       const Partitions& partitions, bool add) {
  const std::optional<NodeId> coordinator = b.transactions().coordinator_node(transactional_id);
  if (!coordinator) co_return all(partitions, ErrorCode::coordinator_not_available);
  if (*coordinator == NodeId(b.node_id()) && add) {
    ErrorCode e = co_await b.transactions().coordinator().add_partitions(transactional_id, producer_id, producer_epoch,
                                                                         partitions, TransactionVersion::tv2);
    co_return all(partitions, e);
  }
  if (*coordinator == NodeId(b.node_id())) {
    auto v = b.transactions().coordinator().verify_partitions(transactional_id, producer_id, producer_epoch, partitions);
    if (v.error != ErrorCode::none) co_return all(partitions, v.error);
    co_return v.partitions;
  }
  protocol::AddPartitionsToTxnRequest req;
  auto& txn = req.transactions.emplace_back();
  txn.transactional_id = transactional_id;
  txn.producer_id = producer_id;
  txn.producer_epoch = producer_epoch;
  txn.verify_only = !add;
  for (const auto& tp : partitions) {
    if (txn.topics.empty() || txn.topics.back().name != tp.topic) txn.topics.emplace_back().name = tp.topic;
    txn.topics.back().partitions.push_back(tp.partition);
  }
  // v5, as Kafka 4's brokers send it: TRANSACTION_ABORTABLE may come back,
  // and passed_on maps it for the client.
  auto response = co_await b.inter_broker()->send<protocol::AddPartitionsToTxnApi>(*coordinator, req, 5);
  if (!response) {
    RLOG_DEBUG("verifying transactional id %s at broker %d: %s", transactional_id.c_str(), coordinator->value(),
               response.error().message().c_str());
    co_return all(partitions, ErrorCode::network_exception);
  }
  if (response->error_code != protocol::code(ErrorCode::none))
    co_return all(partitions, static_cast<ErrorCode>(response->error_code));
  // A partition the answer leaves out is not verified.
  Answers out = all(partitions, ErrorCode::unknown_server_error);
  for (const auto& r : response->results_by_transaction)
    for (const auto& t : r.topic_results)
      for (const auto& p : t.results_by_partition) {
        auto it = out.find({t.name, p.partition_index});
        if (it != out.end()) it->second = static_cast<ErrorCode>(p.partition_error_code);
      }
  co_return out;
}

}  // namespace

bool verification_on(const Broker& broker, bool add) {
  return add || broker.config().get_bool("transaction.partition.verification.enable");
}

bool needs_verification(const Broker& broker, const replication::Partition& part, int64_t producer_id,
                        int16_t producer_epoch, bool add) {
  return verification_on(broker, add) && !part.producers().has_ongoing_txn(producer_id, producer_epoch);
}

awaitable<Answers> verify_partitions(Broker& b, std::string transactional_id, int64_t producer_id,
                                     int16_t producer_epoch, Partitions partitions,
                                     bool transaction_abortable_supported, bool add) {
  Answers answers = co_await ask(b, transactional_id, producer_id, producer_epoch, partitions, add);
  for (auto& [tp, e] : answers) e = passed_on(e, transaction_abortable_supported);
  co_return answers;
}

}  // namespace runnel::broker::transaction
