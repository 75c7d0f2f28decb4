#include "broker/leader_hint.h"

#include "broker/metadata_publisher.h"

namespace runnel::broker {

LeaderHint LeaderHints::current_leader(const std::string& topic, int32_t partition) {
  const cluster::PartitionRegistration* p = image_.partition(topic, PartitionId(partition));
  if (!p || !p->has_leader()) return {};
  const cluster::BrokerRegistration* leader = image_.broker(p->leader);
  if (const cluster::BrokerEndpoint* e = leader ? endpoint_for(*leader, listener_) : nullptr)
    endpoints_[p->leader.value()] = *e;
  return {p->leader.value(), p->leader_epoch.value()};
}

std::optional<std::string> LeaderHints::rack(int32_t node) const {
  const cluster::BrokerRegistration* b = image_.broker(NodeId(node));
  return b ? b->rack : std::nullopt;
}

}  // namespace runnel::broker
