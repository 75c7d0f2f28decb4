// A consumer group member's partitions under the KIP-848 protocol, by topic
// id: what the coordinator's Assignment / TopicPartitions fields carry.
// Ordered containers, so every answer and record lists them in one order.
#pragma once

#include <cstdint>
#include <map>
#include <set>

#include "protocol/codec/types.h"

namespace runnel::broker::group::consumer {

using TopicId = protocol::Uuid;
using Partitions = std::set<int32_t>;
using Assignment = std::map<TopicId, Partitions>;  // no topic maps to an empty set

// Adds `from` to `to`, topic by topic.
void add_all(Assignment& to, const Assignment& from);

// The number of partitions in the assignment.
size_t partition_count(const Assignment& a);

}  // namespace runnel::broker::group::consumer
