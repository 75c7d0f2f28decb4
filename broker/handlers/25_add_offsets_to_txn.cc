// AddOffsetsToTxn (key 25): a transaction will commit offsets for a group
// (TxnOffsetCommit, to the group's coordinator): the group's
// __consumer_offsets partition joins the transaction, so the commit marker
// reaches the offsets. As Kafka's handleAddOffsetsToTxnRequest: WRITE on the
// transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group
// (GROUP_AUTHORIZATION_FAILED); v0-1 get INVALID_PRODUCER_EPOCH for
// PRODUCER_FENCED.
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::AddOffsetsToTxnResponse> handle<p::AddOffsetsToTxnApi>(RequestContext& ctx,
                                                                     p::AddOffsetsToTxnRequest& req) {
  Broker& b = ctx.broker;
  p::AddOffsetsToTxnResponse resp;
  if (!authorized(ctx, AclOperation::write, ResourceType::transactional_id, req.transactional_id)) {
    resp.error_code = p::code(p::ErrorCode::transactional_id_authorization_failed);
    co_return resp;
  }
  if (!authorized(ctx, AclOperation::read, ResourceType::group, req.group_id)) {
    resp.error_code = p::code(p::ErrorCode::group_authorization_failed);
    co_return resp;
  }
  // The offsets topic the commit will go to must exist to be part of it.
  if (!co_await b.groups().offsets_topic_ready()) {
    resp.error_code = p::code(p::ErrorCode::coordinator_not_available);
    co_return resp;
  }
  std::set<storage::TopicPartition> offsets_partition;
  offsets_partition.insert({std::string(group::kOffsetsTopic), b.groups().coordinator().partition_for(req.group_id)});
  p::ErrorCode e = co_await b.transactions().coordinator().add_partitions(req.transactional_id, req.producer_id,
                                                                          req.producer_epoch, offsets_partition);
  if (e == p::ErrorCode::producer_fenced && ctx.api_version() < 2) e = p::ErrorCode::invalid_producer_epoch;
  resp.error_code = p::code(e);
  co_return resp;
}

}  // namespace runnel::broker
