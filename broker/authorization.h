// What a request's principal may do, as Kafka's AuthHelper asks its
// authorizer: every handler checks through here. Without an authorizer
// (authorizer.class.name empty, Kafka's default) everything is allowed and
// the KIP-430 authorized-operations fields report every operation a
// resource type supports, as Kafka's do.
#pragma once

#include <cstdint>
#include <string>

#include "broker/request_context.h"
#include "protocol/error_codes.h"
#include "security/authorizer/acl.h"

namespace runnel::broker {

using security::AclOperation;
using security::ResourceType;

bool authorized(const RequestContext& ctx, AclOperation op, ResourceType type, const std::string& name);
inline bool authorized_on_cluster(const RequestContext& ctx, AclOperation op) {
  return authorized(ctx, op, ResourceType::cluster, security::kClusterName);
}
// Kafka's authorizeByResourceType: `op` allowed on some resource of `type`.
bool authorized_by_resource_type(const RequestContext& ctx, AclOperation op, ResourceType type);

// Kafka's authorization of a config resource (a ConfigResourceType code):
// BROKER, BROKER_LOGGER and CLIENT_METRICS on the cluster
// (CLUSTER_AUTHORIZATION_FAILED), TOPIC and GROUP on themselves
// (TOPIC_ / GROUP_AUTHORIZATION_FAILED). The error when `op` is refused,
// NONE when allowed (or the type is unknown: the caller refuses that).
protocol::ErrorCode config_refusal(const RequestContext& ctx, int8_t config_resource_type, const std::string& name,
                                   AclOperation op);

// Kafka's AclEntry.supportedOperations, one bit per AclOperation code:
// CLUSTER: CREATE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS,
// ALTER_CONFIGS, IDEMPOTENT_WRITE. TOPIC: READ, WRITE, CREATE, DELETE,
// ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS. GROUP: READ, DELETE, DESCRIBE.
constexpr int32_t kAllClusterOperations = (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);
constexpr int32_t kAllTopicOperations =
    (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);
constexpr int32_t kAllGroupOperations = (1 << 3) | (1 << 6) | (1 << 8);

// The KIP-430 field for one resource: the supported operations the
// principal is allowed (Kafka's AuthHelper.authorizedOperations).
int32_t authorized_operations(const RequestContext& ctx, ResourceType type, const std::string& name);

}  // namespace runnel::broker
