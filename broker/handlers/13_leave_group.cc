// LeaveGroup (key 13): members leave, so the group rebalances without
// waiting for their sessions to expire. v0-2 name one member and answer
// with one error; v3+ name a batch of members (by member id, or by
// group.instance.id alone for an administrative removal) and answer per member.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::LeaveGroupResponse> handle<p::LeaveGroupApi>(RequestContext& ctx, p::LeaveGroupRequest& req) {
  const int16_t v = ctx.api_version();
  if (!authorized(ctx, AclOperation::read, ResourceType::group, req.group_id)) {
    p::LeaveGroupResponse refused;
    refused.error_code = p::code(p::ErrorCode::group_authorization_failed);
    co_return refused;
  }
  std::vector<group::LeaveMember> members;
  if (v < 3) members.push_back({req.member_id, std::nullopt});
  else
    for (const auto& m : req.members) members.push_back({m.member_id, m.group_instance_id});

  group::LeaveResult r = ctx.broker.groups().coordinator().leave(req.group_id, members);
  p::LeaveGroupResponse resp;
  if (v < 3) {
    p::ErrorCode e = r.error != p::ErrorCode::none || r.members.empty() ? r.error : r.members.front();
    resp.error_code = p::code(e);
  } else {
    resp.error_code = p::code(r.error);
    if (r.error == p::ErrorCode::none)
      for (size_t i = 0; i < members.size(); ++i) {
        auto& out = resp.members.emplace_back();
        out.member_id = members[i].member_id;
        out.group_instance_id = members[i].group_instance_id;
        out.error_code = p::code(r.members[i]);
      }
  }
  co_return resp;
}

}  // namespace runnel::broker
