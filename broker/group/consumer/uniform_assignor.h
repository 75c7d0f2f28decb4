// KIP-848's "uniform" assignor (Kafka 4.1's UniformAssignor): spreads the
// subscribed partitions so no member has two more than another, keeping as
// much of the previous target as balance allows (balance > stickiness).
// Like Kafka it picks one of two builders: UniformHomogeneousAssignmentBuilder
// when every member subscribes to the same topics,
// UniformHeterogeneousAssignmentBuilder otherwise. Racks are not used:
// Kafka 4.1's builders ignore them.
#pragma once

#include "broker/group/consumer/partition_assignor.h"

namespace runnel::broker::group::consumer {

class UniformAssignor final : public PartitionAssignor {
 public:
  std::string_view name() const override { return "uniform"; }
  GroupAssignment assign(const GroupSpec& group, const SubscribedTopics& topics) const override;

  // The two builders, public for their tests. The homogeneous one expects
  // every member to subscribe to the same existing topics (assign checks).
  static GroupAssignment assign_homogeneous(const GroupSpec& group, const SubscribedTopics& topics);
  static GroupAssignment assign_heterogeneous(const GroupSpec& group, const SubscribedTopics& topics);
};

}  // namespace runnel::broker::group::consumer
