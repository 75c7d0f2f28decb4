// SyncGroup (key 14): the leader sends the assignment it computed; every
// member's SyncGroup answers with its own part once the leader's arrives.
// v3+ carries group.instance.id, v5+ the protocol type and name, which the
// broker checks against the group's (INCONSISTENT_GROUP_PROTOCOL).
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::SyncGroupResponse> handle<p::SyncGroupApi>(RequestContext& ctx, p::SyncGroupRequest& req) {
  if (!authorized(ctx, AclOperation::read, ResourceType::group, req.group_id)) {
    p::SyncGroupResponse refused;
    refused.error_code = p::code(p::ErrorCode::group_authorization_failed);
    co_return refused;
  }
  group::SyncRequest sr;
  sr.group_id = req.group_id;
  sr.generation = req.generation_id;
  sr.member_id = req.member_id;
  sr.group_instance_id = req.group_instance_id;
  sr.protocol_type = req.protocol_type;
  sr.protocol_name = req.protocol_name;
  for (auto& a : req.assignments) sr.assignments.emplace_back(a.member_id, std::move(a.assignment));

  auto& groups = ctx.broker.groups();
  auto c = std::make_shared<group::Completion<group::SyncResult>>(ctx.broker.io().get_executor());
  groups.coordinator().sync(std::move(sr), group::completer(c));
  group::SyncResult r = co_await group::wait_for(c);

  p::SyncGroupResponse resp;
  resp.error_code = p::code(r.error);
  resp.protocol_type = r.protocol_type;
  resp.protocol_name = r.protocol_name;
  resp.assignment = std::move(r.assignment);
  co_return resp;
}

}  // namespace runnel::broker
