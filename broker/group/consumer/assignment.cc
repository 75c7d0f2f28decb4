#include "broker/group/consumer/assignment.h"

namespace runnel::broker::group::consumer {

void add_all(Assignment& to, const Assignment& from) {
  for (const auto& [topic, partitions] : from)
    if (!partitions.empty()) to[topic].insert(partitions.begin(), partitions.end());
}

size_t partition_count(const Assignment& a) {
  size_t n = 0;
  for (const auto& [topic, partitions] : a) n += partitions.size();
  return n;
}

}  // namespace runnel::broker::group::consumer
