// Where a new partition's replicas go (DESIGN.md, "Cluster": the seed's
// rule): over the live brokers sorted by id, partition i's first replica
// is broker (i mod n) and its j-th further replica broker ((i + j) mod n).
// The first replica is the preferred leader, so leadership spreads evenly
// across brokers as partitions do. Kafka's placer also starts at a random
// broker and stripes racks; this rule is deterministic, which makes a
// cluster's layout predictable and testable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/ids.h"
#include "cluster/metadata_image.h"

namespace runnel::cluster {

struct PlacementError {
  std::string message;  // Kafka's INVALID_REPLICATION_FACTOR message
};

struct Placement {
  std::vector<std::vector<NodeId>> replicas;  // one list per new partition, preferred leader first
  std::optional<PlacementError> error;
};

// Replicas for partitions [first, first + count) of a topic.
Placement place_replicas(std::vector<NodeId> live_brokers, int32_t first, int32_t count, int16_t replication_factor);

// A live broker and its broker.rack.
struct RackedBroker {
  NodeId id;
  std::optional<std::string> rack;
};

// The same rule, rack-aware when every live broker has a rack (Kafka's
// rack-aware assignment): the brokers are ordered rack by rack in turn
// (the first broker of each rack, by rack name, then the second of each,
// ...), partition i's first replica is broker (i mod n) of that order, and
// each further replica is the next broker after it in the order whose rack
// holds no replica of the partition yet -- any next broker once every rack
// holds one. So a partition's replicas span min(replication factor, racks)
// racks. With any broker lacking a rack: place_replicas above.
Placement place_replicas(std::vector<RackedBroker> live_brokers, int32_t first, int32_t count,
                         int16_t replication_factor);
// The image's live brokers with their racks.
std::vector<RackedBroker> live_racked_brokers(const MetadataImage& image);

// Kafka's message when the cluster has fewer brokers than the factor.
std::string replication_factor_unreachable(int16_t replication_factor, size_t brokers);

}  // namespace runnel::cluster
