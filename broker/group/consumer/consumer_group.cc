#include "broker/group/consumer/consumer_group.h"

namespace runnel::broker::group::consumer {

const char* state_name(ConsumerGroupState s) {
  switch (s) {
    case ConsumerGroupState::empty:
      return "Empty";
    case ConsumerGroupState::assigning:
      return "Assigning";
    case ConsumerGroupState::reconciling:
      return "Reconciling";
    case ConsumerGroupState::stable:
      return "Stable";
  }
  return "Unknown";
}

ConsumerGroupState ConsumerGroup::state() const {
  if (members.empty()) return ConsumerGroupState::empty;
  if (group_epoch > assignment_epoch) return ConsumerGroupState::assigning;
  for (const auto& [id, m] : members)
    if (m.state != MemberState::stable || m.member_epoch != assignment_epoch) return ConsumerGroupState::reconciling;
  return ConsumerGroupState::stable;
}

int32_t ConsumerGroup::partition_epoch(const TopicId& topic, int32_t partition) const {
  for (const auto& [id, m] : members) {
    for (const Assignment* owned : {&m.assigned_partitions, &m.partitions_pending_revocation}) {
      auto it = owned->find(topic);
      if (it != owned->end() && it->second.contains(partition)) return m.member_epoch;
    }
  }
  return -1;
}

const ConsumerGroupMember* ConsumerGroup::static_member(const std::string& instance_id) const {
  for (const auto& [id, m] : members)
    if (m.instance_id == instance_id) return &m;
  return nullptr;
}

const Assignment& ConsumerGroup::target_of(const std::string& member_id) const {
  static const Assignment none;
  auto it = target.find(member_id);
  return it == target.end() ? none : it->second;
}

}  // namespace runnel::broker::group::consumer
