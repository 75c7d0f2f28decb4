// CreateAcls (key 30): adds ACL bindings, as Kafka's AclApis.handleCreateAcls
// and AclControlManager: ALTER on the cluster is required (every creation
// answered CLUSTER_AUTHORIZATION_FAILED), no authorizer is SECURITY_DISABLED,
// an invalid binding fails alone with INVALID_REQUEST and the valid ones are
// stored together; an existing binding succeeds without a second copy.
// v1-3 alike on the wire (v2 flexible, v3 allows the USER resource type).
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::CreateAclsResponse> handle<p::CreateAclsApi>(RequestContext& ctx, p::CreateAclsRequest& req) {
  p::CreateAclsResponse resp;
  auto all_fail = [&](p::ErrorCode code, const std::string& message) {
    for (size_t i = 0; i < req.creations.size(); ++i) resp.results.push_back({p::code(code), message, {}});
    return resp;
  };
  if (!authorized_on_cluster(ctx, AclOperation::alter))
    co_return all_fail(p::ErrorCode::cluster_authorization_failed, "Cluster authorization failed.");
  if (!ctx.broker.acls()) co_return all_fail(p::ErrorCode::security_disabled, "No Authorizer is configured.");
  std::vector<security::AclBinding> valid;
  for (const auto& c : req.creations) {
    security::AclBinding b{security::resource_type(c.resource_type), c.resource_name,
                           security::pattern_type(c.resource_pattern_type), c.principal, c.host,
                           security::acl_operation(c.operation), security::acl_permission_type(c.permission_type)};
    auto why = security::invalid_binding(b);
    resp.results.push_back({p::code(why ? p::ErrorCode::invalid_request : p::ErrorCode::none), why, {}});
    if (!why) valid.push_back(std::move(b));
  }
  if (valid.empty()) co_return resp;
  if (auto ec = co_await ctx.broker.acls()->create(std::move(valid)))
    for (auto& r : resp.results)
      if (r.error_code == 0) r = {p::code(p::ErrorCode::unknown_server_error), "cannot store the ACLs: " + ec.message(), {}};
  co_return resp;
}

}  // namespace runnel::broker
