// The "consumer" embedded protocol inside JoinGroup and SyncGroup
// (ConsumerProtocolSubscription / ConsumerProtocolAssignment, version 0,
// which every Kafka consumer still reads), and the range assignor that a
// group leader runs over the members' subscriptions (RangeAssignor.java):
// per topic, members in sorted order each take a contiguous range, the
// first (partitions % members) one partition more.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "protocol/codec/types.h"

namespace runnel::protocol {

struct Subscription {
  std::vector<std::string> topics;
};

// topic -> partitions
using Assignment = std::map<std::string, std::vector<int32_t>>;

protocol::Bytes encode_subscription(const Subscription& s);
std::optional<Subscription> decode_subscription(protocol::ByteView bytes);
protocol::Bytes encode_assignment(const Assignment& a);
std::optional<Assignment> decode_assignment(protocol::ByteView bytes);

// member id -> its assignment. `members` maps member id to subscription
// (members sort by member id; static group instance ids are not used here);
// `partition_counts` gives each subscribed topic's partition count.
std::map<std::string, Assignment> range_assign(const std::map<std::string, Subscription>& members,
                                               const std::map<std::string, int32_t>& partition_counts);

}  // namespace runnel::protocol
