// ConsumerGroupHeartbeat (key 68): the KIP-848 consumer group protocol.
// A member joins (epoch 0), heartbeats with what it owns, and is answered
// with its epoch and, when it changed, its assignment; it leaves with epoch
// -1 (-2 for a static member coming back). As Kafka's handler: READ on the
// group, else GROUP_AUTHORIZATION_FAILED; the coordinator
// (group/consumer/consumer_group_manager.h) does the rest.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::ConsumerGroupHeartbeatResponse> handle<p::ConsumerGroupHeartbeatApi>(
    RequestContext& ctx, p::ConsumerGroupHeartbeatRequest& req) {
  namespace consumer = group::consumer;
  p::ConsumerGroupHeartbeatResponse resp;
  if (!authorized(ctx, AclOperation::read, ResourceType::group, req.group_id)) {
    resp.error_code = p::code(p::ErrorCode::group_authorization_failed);
    co_return resp;
  }
  consumer::ConsumerHeartbeat hb;
  hb.api_version = ctx.api_version();
  hb.group_id = req.group_id;
  hb.member_id = req.member_id;
  hb.member_epoch = req.member_epoch;
  hb.instance_id = req.instance_id;
  hb.rack_id = req.rack_id;
  hb.rebalance_timeout_ms = req.rebalance_timeout_ms;
  hb.subscribed_topic_names = req.subscribed_topic_names;
  hb.subscribed_topic_regex = req.subscribed_topic_regex;
  hb.server_assignor = req.server_assignor;
  if (req.topic_partitions) {
    consumer::Assignment owned;
    for (const auto& tp : *req.topic_partitions)
      if (!tp.partitions.empty()) owned[tp.topic_id].insert(tp.partitions.begin(), tp.partitions.end());
    hb.owned = std::move(owned);
  }
  hb.client_id = ctx.client_id();
  hb.client_host = "/" + ctx.client_host;

  auto& groups = ctx.broker.groups();
  auto c = std::make_shared<group::Completion<consumer::ConsumerHeartbeatResult>>(ctx.broker.io().get_executor());
  groups.coordinator().consumer_heartbeat(std::move(hb), group::completer(c));
  consumer::ConsumerHeartbeatResult r = co_await group::wait_for(c);

  resp.error_code = p::code(r.error);
  resp.error_message = std::move(r.error_message);
  if (r.error != p::ErrorCode::none) co_return resp;
  resp.member_id = std::move(r.member_id);
  resp.member_epoch = r.member_epoch;
  resp.heartbeat_interval_ms = r.heartbeat_interval_ms;
  if (r.assignment) {
    auto& a = resp.assignment.emplace();
    for (const auto& [topic, partitions] : *r.assignment) {
      auto& tp = a.topic_partitions.emplace_back();
      tp.topic_id = topic;
      tp.partitions.assign(partitions.begin(), partitions.end());
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
