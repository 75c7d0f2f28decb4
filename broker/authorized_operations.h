// Authorized-operation bit fields (KIP-430) for the responses that report
// them when asked (Metadata, DescribeCluster, DescribeGroups). Runnel has no authorizer, so
// like Kafka without one it reports every operation a resource type
// supports (Kafka's AclEntry.supportedOperations), one bit per AclOperation
// code; INT32_MIN when not asked.
#pragma once

#include <cstdint>

namespace runnel::broker {

// CLUSTER: CREATE(5), ALTER(7), DESCRIBE(8), CLUSTER_ACTION(9),
// DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11), IDEMPOTENT_WRITE(12).
constexpr int32_t kAllClusterOperations = (1 << 5) | (1 << 7) | (1 << 8) | (1 << 9) | (1 << 10) | (1 << 11) | (1 << 12);

// TOPIC: READ(3), WRITE(4), CREATE(5), DELETE(6), ALTER(7), DESCRIBE(8),
// DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11).
constexpr int32_t kAllTopicOperations =
    (1 << 3) | (1 << 4) | (1 << 5) | (1 << 6) | (1 << 7) | (1 << 8) | (1 << 10) | (1 << 11);

// GROUP: READ(3), DELETE(6), DESCRIBE(8).
constexpr int32_t kAllGroupOperations = (1 << 3) | (1 << 6) | (1 << 8);

}  // namespace runnel::broker
