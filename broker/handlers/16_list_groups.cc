// ListGroups (key 16): every group this coordinator knows. v4+ filters by
// state and v5+ by type (both case-insensitive): "classic" groups and
// KIP-848 "consumer" groups, whose protocol type is "consumer". As Kafka: DESCRIBE on the cluster lists every group, else
// only the groups the principal may DESCRIBE.
#include <algorithm>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

bool iequals(const std::string& a, const std::string& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

bool matches(const std::vector<std::string>& filter, const std::string& value) {
  return filter.empty() || std::any_of(filter.begin(), filter.end(), [&](const auto& f) { return iequals(f, value); });
}

}  // namespace

template <>
awaitable<p::ListGroupsResponse> handle<p::ListGroupsApi>(RequestContext& ctx, p::ListGroupsRequest& req) {
  p::ListGroupsResponse resp;
  std::vector<group::GroupListing> groups;
  resp.error_code = p::code(ctx.broker.groups().coordinator().list_groups(groups));
  const bool all = authorized_on_cluster(ctx, AclOperation::describe);
  for (const auto& g : groups) {
    if (!all && !authorized(ctx, AclOperation::describe, ResourceType::group, g.group_id)) continue;
    if (!matches(req.states_filter, g.state) || !matches(req.types_filter, g.type)) continue;
    auto& out = resp.groups.emplace_back();
    out.group_id = g.group_id;
    out.protocol_type = g.protocol_type;
    out.group_state = g.state;
    out.group_type = g.type;
  }
  co_return resp;
}

}  // namespace runnel::broker
