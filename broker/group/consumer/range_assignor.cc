// Kafka 4.1's RangeAssignor: one pass per topic over its subscribers, static
// members first in instance-id order, then the others in member-id order
// (its sortMemberIds). Kafka throws PartitionAssignorException for a
// subscribed topic id missing from the metadata; here such a topic simply
// has no partitions to give.
#include "broker/group/consumer/range_assignor.h"

#include <algorithm>
#include <vector>

namespace runnel::broker::group::consumer {

GroupAssignment RangeAssignor::assign(const GroupSpec& group, const SubscribedTopics& topics) const {
  GroupAssignment result;
  std::vector<const std::string*> order;
  for (const auto& [member_id, member] : group.members) order.push_back(&member_id);
  std::stable_sort(order.begin(), order.end(), [&](const std::string* a, const std::string* b) {
    const auto& ia = group.members.at(*a).instance_id;
    const auto& ib = group.members.at(*b).instance_id;
    if (ia && ib) return *ia < *ib;
    return ia.has_value() && !ib.has_value();  // otherwise member-id order, as `order` starts
  });
  std::map<TopicId, std::vector<const std::string*>> subscribers;  // in that order
  for (const std::string* member_id : order) {
    result[*member_id];
    for (const TopicId& topic : group.members.at(*member_id).subscribed_topic_ids)
      if (topics.contains(topic)) subscribers[topic].push_back(member_id);
  }

  for (const auto& [topic, members] : subscribers) {
    const int32_t partitions = std::max(topics.at(topic).partitions, 0);
    const int32_t n = static_cast<int32_t>(members.size());
    const int32_t quota = partitions / n;
    int32_t longer = partitions % n;  // the first `longer` members get quota + 1
    int32_t start = 0;
    for (const std::string* member_id : members) {
      int32_t end = start + quota;
      if (longer > 0) {
        ++end;
        --longer;
      }
      if (start < end) {
        Partitions& range = result[*member_id][topic];
        for (int32_t p = start; p < end; ++p) range.insert(range.end(), p);
      }
      start = end;
    }
  }
  return result;
}

}  // namespace runnel::broker::group::consumer
