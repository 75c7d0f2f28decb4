#include "cluster/replica_placement.h"

#include <algorithm>

namespace runnel::cluster {

std::string replication_factor_unreachable(int16_t replication_factor, size_t brokers) {
  const std::string rf = std::to_string(replication_factor);
  return "Unable to replicate the partition " + rf + " time(s): The target replication factor of " + rf +
         " cannot be reached because only " + std::to_string(brokers) + " broker(s) are registered.";
}

Placement place_replicas(std::vector<NodeId> live_brokers, int32_t first, int32_t count, int16_t replication_factor) {
  Placement out;
  std::sort(live_brokers.begin(), live_brokers.end());
  live_brokers.erase(std::unique(live_brokers.begin(), live_brokers.end()), live_brokers.end());
  const auto n = static_cast<int64_t>(live_brokers.size());
  if (replication_factor <= 0) {
    out.error = PlacementError{"Replication factor must be larger than 0, or -1 to use the default value."};
    return out;
  }
  if (replication_factor > n) {
    out.error = PlacementError{replication_factor_unreachable(replication_factor, live_brokers.size())};
    return out;
  }
  out.replicas.reserve(static_cast<size_t>(std::max(count, 0)));
  for (int64_t i = first; i < static_cast<int64_t>(first) + count; ++i) {
    std::vector<NodeId> r;
    r.reserve(static_cast<size_t>(replication_factor));
    for (int64_t j = 0; j < replication_factor; ++j) r.push_back(live_brokers[static_cast<size_t>((i + j) % n)]);
    out.replicas.push_back(std::move(r));
  }
  return out;
}

}  // namespace runnel::cluster
