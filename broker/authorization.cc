#include "broker/authorization.h"

#include "broker/broker.h"

namespace runnel::broker {

bool authorized(const RequestContext& ctx, AclOperation op, ResourceType type, const std::string& name) {
  const auto* a = ctx.broker.authorizer();
  return !a || a->authorize(ctx.principal, ctx.client_host, op, type, name);
}

bool authorized_by_resource_type(const RequestContext& ctx, AclOperation op, ResourceType type) {
  const auto* a = ctx.broker.authorizer();
  return !a || a->authorize_by_resource_type(ctx.principal, ctx.client_host, op, type);
}

protocol::ErrorCode config_refusal(const RequestContext& ctx, int8_t config_resource_type, const std::string& name,
                                   AclOperation op) {
  using protocol::ErrorCode;
  switch (config_resource_type) {
    case 2:  // TOPIC
      return authorized(ctx, op, ResourceType::topic, name) ? ErrorCode::none : ErrorCode::topic_authorization_failed;
    case 32:  // GROUP
      return authorized(ctx, op, ResourceType::group, name) ? ErrorCode::none : ErrorCode::group_authorization_failed;
    case 4:   // BROKER
    case 8:   // BROKER_LOGGER
    case 16:  // CLIENT_METRICS
      return authorized_on_cluster(ctx, op) ? ErrorCode::none : ErrorCode::cluster_authorization_failed;
    default: return ErrorCode::none;
  }
}

int32_t authorized_operations(const RequestContext& ctx, ResourceType type, const std::string& name) {
  const int32_t supported = type == ResourceType::cluster ? kAllClusterOperations
                            : type == ResourceType::topic ? kAllTopicOperations
                            : type == ResourceType::group ? kAllGroupOperations
                                                          : 0;
  if (!ctx.broker.authorizer()) return supported;
  int32_t out = 0;
  for (int bit = 0; bit < 31; ++bit)
    if ((supported & (1 << bit)) && authorized(ctx, static_cast<AclOperation>(bit), type, name)) out |= 1 << bit;
  return out;
}

}  // namespace runnel::broker
