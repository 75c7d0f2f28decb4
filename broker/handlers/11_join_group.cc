// JoinGroup (key 11): a member joins or rejoins a classic group; the
// response waits until the rebalance completes (group/group_coordinator.h).
// v0 has no rebalance timeout (the session timeout serves), v4+ gets
// MEMBER_ID_REQUIRED with a fresh member id on its first join (KIP-394),
// v5+ carries group.instance.id (static membership, KIP-345), v7+ returns
// the protocol type, v9+ may tell a static leader to skip the assignment.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::JoinGroupResponse> handle<p::JoinGroupApi>(RequestContext& ctx, p::JoinGroupRequest& req) {
  const int16_t v = ctx.api_version();
  if (!authorized(ctx, AclOperation::read, ResourceType::group, req.group_id)) {
    // Kafka's JoinGroupResult(memberId, GROUP_AUTHORIZATION_FAILED).
    p::JoinGroupResponse refused;
    refused.error_code = p::code(p::ErrorCode::group_authorization_failed);
    refused.generation_id = -1;
    refused.protocol_name = v >= 7 ? std::nullopt : std::optional<std::string>("");
    refused.member_id = req.member_id;
    co_return refused;
  }
  group::JoinRequest jr;
  jr.group_id = req.group_id;
  jr.member_id = req.member_id;
  jr.group_instance_id = req.group_instance_id;
  jr.require_known_member_id = v >= 4;
  jr.supports_skip_assignment = v >= 9;
  jr.client_id = ctx.client_id();
  jr.client_host = "/" + ctx.client_host;
  jr.session_timeout_ms = req.session_timeout_ms;
  jr.rebalance_timeout_ms = v >= 1 ? req.rebalance_timeout_ms : req.session_timeout_ms;
  jr.protocol_type = req.protocol_type;
  for (auto& proto : req.protocols) jr.protocols.push_back({proto.name, std::move(proto.metadata)});

  auto c = std::make_shared<group::Completion<group::JoinResult>>(ctx.broker.io().get_executor());
  ctx.broker.groups().coordinator().join(std::move(jr), group::completer(c));
  group::JoinResult r = co_await group::wait_for(c);

  p::JoinGroupResponse resp;
  resp.error_code = p::code(r.error);
  resp.generation_id = r.generation;
  resp.protocol_type = r.protocol_type;
  // v0-6 cannot say null: an empty name stands for none.
  resp.protocol_name = v >= 7 ? r.protocol_name : std::optional<std::string>(r.protocol_name.value_or(""));
  resp.leader = r.leader;
  resp.skip_assignment = r.skip_assignment;
  resp.member_id = r.member_id;
  for (auto& m : r.members) {
    auto& out = resp.members.emplace_back();
    out.member_id = m.member_id;
    out.group_instance_id = m.group_instance_id;
    out.metadata = std::move(m.metadata);
  }
  co_return resp;
}

}  // namespace runnel::broker
