// AddPartitionsToTxn (key 24): partitions a transaction is about to write.
// As Kafka's handleAddPartitionsToTxnRequest. v0-3 are a client's: WRITE on
// the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED everywhere),
// then per partition WRITE on its topic (TOPIC_AUTHORIZATION_FAILED) and the
// partition known (UNKNOWN_TOPIC_OR_PARTITION); any of those fails the whole
// request, the other partitions answering OPERATION_NOT_ATTEMPTED. Then the
// coordinator adds them, with one error for all. v4+ are a broker's, a batch
// of transactions under CLUSTER_ACTION: verify_only ones ask whether the
// partitions are in the transaction (KIP-890 part 1), the others add them
// for a client of transaction protocol v2 (KIP-890 part 2).
// Clients older than the error get their older equivalent: v0-1
// INVALID_PRODUCER_EPOCH for PRODUCER_FENCED, v0-3 INVALID_TXN_STATE for
// TRANSACTION_ABORTABLE.
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using TopicResult = p::AddPartitionsToTxnResponse::AddPartitionsToTxnTopicResult;
using Topics = std::vector<p::AddPartitionsToTxnRequest::AddPartitionsToTxnTopic>;

ErrorCode for_version(ErrorCode e, int16_t version) {
  if (e == ErrorCode::producer_fenced && version < 2) return ErrorCode::invalid_producer_epoch;
  if (e == ErrorCode::transaction_abortable && version < 4) return ErrorCode::invalid_txn_state;
  return e;
}

std::set<storage::TopicPartition> partitions_of(const Topics& topics) {
  std::set<storage::TopicPartition> out;
  for (const auto& t : topics)
    for (int32_t p : t.partitions) out.insert({t.name, p});
  return out;
}

// The results, topic by topic, of `error_for` each partition.
template <typename F>
std::vector<TopicResult> results(const std::set<storage::TopicPartition>& partitions, F error_for) {
  std::vector<TopicResult> out;
  for (const auto& tp : partitions) {
    if (out.empty() || out.back().name != tp.topic) out.emplace_back().name = tp.topic;
    out.back().results_by_partition.push_back({tp.partition, p::code(error_for(tp)), {}});
  }
  return out;
}

awaitable<std::vector<TopicResult>> client_form(RequestContext& ctx, p::AddPartitionsToTxnRequest& req) {
  Broker& b = ctx.broker;
  const auto parts = partitions_of(req.v3_and_below_topics);
  const int16_t v = ctx.api_version();
  if (!authorized(ctx, AclOperation::write, ResourceType::transactional_id, req.v3_and_below_transactional_id))
    co_return results(parts, [](const auto&) { return ErrorCode::transactional_id_authorization_failed; });
  std::map<storage::TopicPartition, ErrorCode> refused;
  for (const auto& tp : parts) {
    if (!authorized(ctx, AclOperation::write, ResourceType::topic, tp.topic))
      refused[tp] = ErrorCode::topic_authorization_failed;
    else if (!b.replica_manager().get_partition(tp.topic, PartitionId(tp.partition)))
      refused[tp] = ErrorCode::unknown_topic_or_partition;
  }
  if (!refused.empty())
    co_return results(parts, [&refused](const storage::TopicPartition& tp) {
      auto it = refused.find(tp);
      return it == refused.end() ? ErrorCode::operation_not_attempted : it->second;
    });
  ErrorCode e = co_await b.transactions().coordinator().add_partitions(
      req.v3_and_below_transactional_id, req.v3_and_below_producer_id, req.v3_and_below_producer_epoch, parts);
  e = for_version(e, v);
  co_return results(parts, [e](const auto&) { return e; });
}

}  // namespace

template <>
awaitable<p::AddPartitionsToTxnResponse> handle<p::AddPartitionsToTxnApi>(RequestContext& ctx,
                                                                           p::AddPartitionsToTxnRequest& req) {
  p::AddPartitionsToTxnResponse resp;
  if (ctx.api_version() < 4) {
    resp.results_by_topic_v3_and_below = co_await client_form(ctx, req);
    co_return resp;
  }
  if (!authorized_on_cluster(ctx, AclOperation::cluster_action)) {
    resp.error_code = p::code(ErrorCode::cluster_authorization_failed);
    co_return resp;
  }
  auto& coordinator = ctx.broker.transactions().coordinator();
  for (auto& txn : req.transactions) {
    auto& r = resp.results_by_transaction.emplace_back();
    r.transactional_id = txn.transactional_id;
    const auto parts = partitions_of(txn.topics);
    if (txn.verify_only) {
      auto v = coordinator.verify_partitions(txn.transactional_id, txn.producer_id, txn.producer_epoch, parts);
      r.topic_results = results(parts, [&v](const storage::TopicPartition& tp) {
        return v.error != ErrorCode::none ? v.error : v.partitions.at(tp);
      });
      continue;
    }
    // A partition leader adding a Produce v12's or TxnOffsetCommit v5's
    // partition for a client of transaction protocol v2.
    ErrorCode e = co_await coordinator.add_partitions(txn.transactional_id, txn.producer_id, txn.producer_epoch, parts,
                                                      transaction::TransactionVersion::tv2);
    r.topic_results = results(parts, [e](const auto&) { return e; });
  }
  co_return resp;
}

}  // namespace runnel::broker
