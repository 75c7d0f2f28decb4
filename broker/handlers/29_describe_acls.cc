// DescribeAcls (key 29): the ACL bindings matching one filter, grouped by
// resource pattern, as Kafka's AclApis.handleDescribeAcls answers: DESCRIBE
// on the cluster is required (CLUSTER_AUTHORIZATION_FAILED), no authorizer
// is SECURITY_DISABLED, a filter with an UNKNOWN field INVALID_REQUEST.
// v1-3 alike on the wire (v2 flexible, v3 allows the USER resource type).
#include <map>
#include <tuple>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::DescribeAclsResponse> handle<p::DescribeAclsApi>(RequestContext& ctx, p::DescribeAclsRequest& req) {
  p::DescribeAclsResponse resp;
  auto fail = [&resp](p::ErrorCode code, std::string message) {
    resp.error_code = p::code(code);
    resp.error_message = std::move(message);
    return resp;
  };
  if (!authorized_on_cluster(ctx, AclOperation::describe))
    co_return fail(p::ErrorCode::cluster_authorization_failed, "Cluster authorization failed.");
  const auto* authorizer = ctx.broker.authorizer();
  if (!authorizer) co_return fail(p::ErrorCode::security_disabled, "No Authorizer is configured on the broker");
  auto filter = security::filter_from_wire(req.resource_type_filter, req.resource_name_filter, req.pattern_type_filter,
                                           req.principal_filter, req.host_filter, req.operation, req.permission_type);
  if (auto why = security::invalid_filter(filter)) co_return fail(p::ErrorCode::invalid_request, *why);
  resp.error_message = std::nullopt;
  // Kafka's DescribeAclsResponse.aclsResources: one entry per pattern.
  using Pattern = std::tuple<int8_t, std::string, int8_t>;
  std::map<Pattern, size_t> index;
  for (const auto& b : authorizer->acls(filter)) {
    Pattern key{static_cast<int8_t>(b.resource_type), b.resource_name, static_cast<int8_t>(b.pattern_type)};
    auto [it, added] = index.emplace(key, resp.resources.size());
    if (added) {
      p::DescribeAclsResponse::DescribeAclsResource r;
      r.resource_type = std::get<0>(key);
      r.resource_name = b.resource_name;
      r.pattern_type = std::get<2>(key);
      resp.resources.push_back(std::move(r));
    }
    resp.resources[it->second].acls.push_back(
        {b.principal, b.host, static_cast<int8_t>(b.operation), static_cast<int8_t>(b.permission), {}});
  }
  co_return resp;
}

}  // namespace runnel::broker
