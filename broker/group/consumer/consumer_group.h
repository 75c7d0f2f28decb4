// One KIP-848 consumer group (Kafka's ConsumerGroup): the group epoch, the
// target assignment and the epoch it was computed at, and the members with
// their reconciliation state. Plain data built only by replaying
// __consumer_offsets records (consumer_group_records.h), on load and after
// each write, so what a coordinator serves is what the log says.
//
//   Empty        no member
//   Assigning    the group epoch is ahead of the target assignment's
//   Reconciling  some member is not yet stable at the assignment epoch
//   Stable       every member is
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "broker/group/consumer/assignment.h"
#include "broker/group/consumer/consumer_group_member.h"

namespace runnel::broker::group::consumer {

enum class ConsumerGroupState { empty, assigning, reconciling, stable };
const char* state_name(ConsumerGroupState s);  // Kafka's: "Empty", "Assigning", ...

struct ConsumerGroup {
  std::string group_id;
  int32_t group_epoch = 0;
  int64_t metadata_hash = 0;
  int32_t assignment_epoch = 0;
  std::map<std::string, ConsumerGroupMember> members;  // by member id
  std::map<std::string, Assignment> target;            // by member id

  ConsumerGroupState state() const;
  // The epoch of the member that owns the partition (assigned, or pending
  // its revocation), -1 if none does.
  int32_t partition_epoch(const TopicId& topic, int32_t partition) const;
  // The member with this group.instance.id, if any.
  const ConsumerGroupMember* static_member(const std::string& instance_id) const;
  const Assignment& target_of(const std::string& member_id) const;
};

}  // namespace runnel::broker::group::consumer
