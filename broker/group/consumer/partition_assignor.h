// The server-side assignors of KIP-848 (`group.consumer.assignors`, Kafka's
// ConsumerGroupPartitionAssignor): given every member's subscription and its
// assignment of the last target, the group's next target assignment.
// Assignors are pure: the coordinator calls one whenever the group epoch
// passes the assignment epoch and persists what it returns.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "broker/group/consumer/assignment.h"

namespace runnel::broker::group::consumer {

struct MemberSubscription {
  std::optional<std::string> instance_id;  // group.instance.id: range orders static members first
  std::optional<std::string> rack_id;
  std::set<TopicId> subscribed_topic_ids;  // resolved: names and regex matches, existing topics only
  Assignment target;                       // its part of the previous target (stickiness)
};

struct GroupSpec {
  std::map<std::string, MemberSubscription> members;  // by member id
};

struct SubscribedTopic {
  std::string name;
  int32_t partitions = 0;
  std::map<int32_t, std::set<std::string>> partition_racks;  // racks of each partition's replicas; may be empty
};

using SubscribedTopics = std::map<TopicId, SubscribedTopic>;
using GroupAssignment = std::map<std::string, Assignment>;  // by member id; every member present

class PartitionAssignor {
 public:
  virtual ~PartitionAssignor() = default;
  virtual std::string_view name() const = 0;  // "uniform", "range"
  // Every member of `group` is in the answer (an empty assignment if it
  // gets nothing); every partition of a subscribed topic goes to exactly one
  // member subscribed to it.
  virtual GroupAssignment assign(const GroupSpec& group, const SubscribedTopics& topics) const = 0;
};

// The assignors by name, in the order `group.consumer.assignors` lists them;
// nullptr for an unknown name.
std::unique_ptr<PartitionAssignor> make_assignor(std::string_view name);

}  // namespace runnel::broker::group::consumer
