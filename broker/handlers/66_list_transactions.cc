// ListTransactions (key 66, KIP-664; v1 adds KIP-994's duration filter): the
// transactional ids this coordinator knows, as `kafka-transactions.sh list`
// prints them. As Kafka's TransactionStateManager.listTransactionStates:
// COORDINATOR_LOAD_IN_PROGRESS while a partition loads; state filters Kafka
// does not know are echoed in unknown_state_filters; an id is listed when it
// matches every filter given (state, producer id, running at least
// duration_filter ms) and the caller may DESCRIBE it.
#include <set>

#include "base/clock.h"
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::ListTransactionsResponse> handle<p::ListTransactionsApi>(RequestContext& ctx,
                                                                       p::ListTransactionsRequest& req) {
  using transaction::TransactionState;
  p::ListTransactionsResponse resp;
  auto& service = ctx.broker.transactions();
  std::set<TransactionState> states;
  for (const auto& name : req.state_filters) {
    if (auto s = transaction::transaction_state_from_name(name)) states.insert(*s);
    else resp.unknown_state_filters.push_back(name);
  }
  const std::set<int64_t> producer_ids(req.producer_id_filters.begin(), req.producer_id_filters.end());
  bool loading = false;
  auto all = service.coordinator().all(loading);
  if (loading) {
    resp.error_code = p::code(p::ErrorCode::coordinator_load_in_progress);
    co_return resp;
  }
  const int64_t now = runnel::Clock::system().wall_ms();
  for (const transaction::TransactionMetadata* md : all) {
    if (md->state == TransactionState::dead) continue;
    if (!states.empty() && !states.contains(md->state)) continue;
    if (!producer_ids.empty() && !producer_ids.contains(md->producer_id)) continue;
    if (req.duration_filter >= 0 && now - md->txn_start_timestamp < req.duration_filter) continue;
    if (!authorized(ctx, AclOperation::describe, ResourceType::transactional_id, md->transactional_id)) continue;
    resp.transaction_states.push_back(
        {md->transactional_id, md->producer_id, std::string(transaction::state_name(md->state)), {}});
  }
  co_return resp;
}

}  // namespace runnel::broker
