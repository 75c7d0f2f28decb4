// DeleteAcls (key 31): removes every binding matching each filter and lists
// what each removed, as Kafka's AclApis.handleDeleteAcls and
// AclControlManager.deleteAcls: ALTER on the cluster is required
// (CLUSTER_AUTHORIZATION_FAILED), no authorizer is SECURITY_DISABLED, a
// filter with an UNKNOWN field fails alone with INVALID_REQUEST.
// v1-3 alike on the wire (v2 flexible, v3 allows the USER resource type).
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using Result_ = p::DeleteAclsResponse::DeleteAclsFilterResult;

Result_ failed(p::ErrorCode code, std::string message) {
  Result_ r;
  r.error_code = p::code(code);
  r.error_message = std::move(message);
  return r;
}

}  // namespace

template <>
awaitable<p::DeleteAclsResponse> handle<p::DeleteAclsApi>(RequestContext& ctx, p::DeleteAclsRequest& req) {
  p::DeleteAclsResponse resp;
  auto all_fail = [&](p::ErrorCode code, const std::string& message) {
    for (size_t i = 0; i < req.filters.size(); ++i) resp.filter_results.push_back(failed(code, message));
    return resp;
  };
  if (!authorized_on_cluster(ctx, AclOperation::alter))
    co_return all_fail(p::ErrorCode::cluster_authorization_failed, "Cluster authorization failed.");
  if (!ctx.broker.acls()) co_return all_fail(p::ErrorCode::security_disabled, "No Authorizer is configured.");
  std::vector<security::AclBindingFilter> usable;
  std::vector<size_t> slot;  // each usable filter's result
  for (const auto& f : req.filters) {
    auto filter = security::filter_from_wire(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter,
                                             f.principal_filter, f.host_filter, f.operation, f.permission_type);
    if (auto why = security::invalid_filter(filter)) {
      resp.filter_results.push_back(failed(p::ErrorCode::invalid_request, *why));
      continue;
    }
    slot.push_back(resp.filter_results.size());
    resp.filter_results.push_back(failed(p::ErrorCode::none, ""));
    resp.filter_results.back().error_message = std::nullopt;
    usable.push_back(std::move(filter));
  }
  if (usable.empty()) co_return resp;
  auto removed = co_await ctx.broker.acls()->remove(std::move(usable));
  for (size_t i = 0; i < slot.size(); ++i) {
    Result_& r = resp.filter_results[slot[i]];
    if (!removed) {
      r = failed(p::ErrorCode::unknown_server_error, "cannot store the ACLs: " + removed.error().message());
      continue;
    }
    for (const auto& b : (*removed)[i])
      r.matching_acls.push_back({0, std::nullopt, static_cast<int8_t>(b.resource_type), b.resource_name,
                                 static_cast<int8_t>(b.pattern_type), b.principal, b.host,
                                 static_cast<int8_t>(b.operation), static_cast<int8_t>(b.permission), {}});
  }
  co_return resp;
}

}  // namespace runnel::broker
