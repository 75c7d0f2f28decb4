// DescribeGroups (key 15): state, protocol and members of each group;
// member metadata and assignments (and the protocol name) only for Stable
// groups, as Kafka. An unknown group is described as Dead; v6+ also says
// GROUP_ID_NOT_FOUND. v3+ may ask for authorized operations: the GROUP
// operations the principal may perform (every one without an authorizer),
// for each group answered without an error (kafka-python asks, and cannot
// read INT32_MIN). A group without DESCRIBE is GROUP_AUTHORIZATION_FAILED.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::DescribeGroupsResponse> handle<p::DescribeGroupsApi>(RequestContext& ctx, p::DescribeGroupsRequest& req) {
  const int16_t v = ctx.api_version();
  p::DescribeGroupsResponse resp;
  for (const auto& id : req.groups) {
    group::GroupDescription d = ctx.broker.groups().coordinator().describe(id);
    auto& out = resp.groups.emplace_back();
    out.group_id = id;
    if (!authorized(ctx, AclOperation::describe, ResourceType::group, id)) {
      out.error_code = p::code(p::ErrorCode::group_authorization_failed);
      continue;
    }
    if (d.error == p::ErrorCode::group_id_not_found) {
      out.group_state = d.state;
      if (v >= 6) {
        out.error_code = p::code(d.error);
        out.error_message = "Group " + id + " not found.";
      } else if (req.include_authorized_operations) {
        out.authorized_operations = authorized_operations(ctx, ResourceType::group, id);
      }
      continue;
    }
    out.error_code = p::code(d.error);
    out.group_state = d.state;
    out.protocol_type = d.protocol_type;
    out.protocol_data = d.protocol_data;
    if (req.include_authorized_operations && out.error_code == 0)
      out.authorized_operations = authorized_operations(ctx, ResourceType::group, id);
    for (auto& m : d.members) {
      auto& om = out.members.emplace_back();
      om.member_id = m.member_id;
      om.group_instance_id = m.group_instance_id;
      om.client_id = m.client_id;
      om.client_host = m.client_host;
      om.member_metadata = std::move(m.metadata);
      om.member_assignment = std::move(m.assignment);
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
