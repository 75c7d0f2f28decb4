// DescribeTransactions (key 65, KIP-664): the coordinator's state of each
// transactional id, as `kafka-transactions.sh describe` prints it. As
// Kafka's handleDescribeTransactionsRequest and the coordinator's
// handleDescribeTransactions: DESCRIBE on the id, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED; an empty id INVALID_REQUEST; an
// unknown one TRANSACTIONAL_ID_NOT_FOUND; the transaction's partitions only
// of topics the caller may DESCRIBE; NOT_COORDINATOR on a broker that does
// not coordinate the id.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::DescribeTransactionsResponse> handle<p::DescribeTransactionsApi>(RequestContext& ctx,
                                                                               p::DescribeTransactionsRequest& req) {
  p::DescribeTransactionsResponse resp;
  auto& service = ctx.broker.transactions();
  for (const auto& id : req.transactional_ids) {
    auto& s = resp.transaction_states.emplace_back();
    s.transactional_id = id;
    s.producer_id = -1;
    s.producer_epoch = -1;
    s.transaction_start_time_ms = -1;
    if (!authorized(ctx, AclOperation::describe, ResourceType::transactional_id, id)) {
      s.error_code = p::code(p::ErrorCode::transactional_id_authorization_failed);
      continue;
    }
    if (id.empty()) {
      s.error_code = p::code(p::ErrorCode::invalid_request);
      continue;
    }
    auto found = service.coordinator().find(id);
    if (found.error != p::ErrorCode::none) {
      s.error_code = p::code(found.error);
      continue;
    }
    const transaction::TransactionMetadata* md = found.metadata;
    if (!md || md->state == transaction::TransactionState::dead) {
      s.error_code = p::code(p::ErrorCode::transactional_id_not_found);
      continue;
    }
    s.transaction_state = std::string(transaction::state_name(md->state));
    s.transaction_timeout_ms = md->txn_timeout_ms;
    s.transaction_start_time_ms = md->txn_start_timestamp;
    s.producer_id = md->producer_id;
    s.producer_epoch = md->producer_epoch;
    for (const auto& tp : md->topic_partitions) {
      if (!authorized(ctx, AclOperation::describe, ResourceType::topic, tp.topic)) continue;
      if (s.topics.empty() || s.topics.back().topic != tp.topic) s.topics.emplace_back().topic = tp.topic;
      s.topics.back().partitions.push_back(tp.partition);
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
