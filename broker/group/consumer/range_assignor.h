// KIP-848's "range" assignor (Kafka 4.1's server-side RangeAssignor): each
// topic is cut into contiguous ranges, one per subscriber in member-id order,
// the first `partitions % subscribers` ranges one longer. Members with the
// same topics and equal partition counts get the same partition numbers of
// each (co-partitioning, for joins). Not sticky and not rack-aware, as in
// Kafka 4.1: the previous target is ignored.
#pragma once

#include "broker/group/consumer/partition_assignor.h"

namespace runnel::broker::group::consumer {

class RangeAssignor final : public PartitionAssignor {
 public:
  std::string_view name() const override { return "range"; }
  GroupAssignment assign(const GroupSpec& group, const SubscribedTopics& topics) const override;
};

}  // namespace runnel::broker::group::consumer
