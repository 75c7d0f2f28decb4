#include "cluster/replica_placement.h"

#include <algorithm>
#include <map>
#include <set>

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

std::vector<RackedBroker> live_racked_brokers(const MetadataImage& image) {
  std::vector<RackedBroker> out;
  for (NodeId id : image.live_brokers()) out.push_back({id, image.broker(id)->rack});
  return out;
}

Placement place_replicas(std::vector<RackedBroker> live_brokers, int32_t first, int32_t count,
                         int16_t replication_factor) {
  const bool racked = !live_brokers.empty() && std::all_of(live_brokers.begin(), live_brokers.end(),
                                                           [](const RackedBroker& b) { return b.rack.has_value(); });
  if (!racked) {
    std::vector<NodeId> ids;
    for (const auto& b : live_brokers) ids.push_back(b.id);
    return place_replicas(std::move(ids), first, count, replication_factor);
  }
  // Kafka's getRackAlternatedBrokerList.
  std::map<std::string, std::vector<NodeId>> by_rack;
  for (const auto& b : live_brokers) by_rack[*b.rack].push_back(b.id);
  for (auto& [_, ids] : by_rack) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  }
  std::vector<NodeId> order;
  std::map<NodeId, std::string> rack_of;
  for (size_t round = 0; order.size() < live_brokers.size(); ++round) {
    bool any = false;
    for (const auto& [rack, ids] : by_rack)
      if (round < ids.size()) {
        order.push_back(ids[round]);
        rack_of[ids[round]] = rack;
        any = true;
      }
    if (!any) break;  // duplicates removed: fewer distinct brokers than entries
  }
  Placement out = place_replicas(order, first, 0, replication_factor);  // the factor's checks
  if (out.error) return out;
  const auto n = static_cast<int64_t>(order.size());
  const size_t racks = by_rack.size();
  for (int64_t i = first; i < static_cast<int64_t>(first) + count; ++i) {
    std::vector<NodeId> r{order[static_cast<size_t>(i % n)]};
    std::set<std::string> used{rack_of[r.front()]};
    for (int64_t k = 1; static_cast<int64_t>(r.size()) < replication_factor && k < 2 * n; ++k) {
      NodeId candidate = order[static_cast<size_t>((i + k % n) % n)];
      if (std::find(r.begin(), r.end(), candidate) != r.end()) continue;
      // A rack already holding a replica is skipped on the first pass (k < n) until every rack holds one.
      if (k < n && used.size() < racks && used.count(rack_of[candidate])) continue;
      r.push_back(candidate);
      used.insert(rack_of[candidate]);
    }
    out.replicas.push_back(std::move(r));
  }
  return out;
}

}  // namespace runnel::cluster
