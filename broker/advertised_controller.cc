#include "broker/advertised_controller.h"

#include <random>

namespace runnel::broker {

NodeId advertised_controller(const cluster::MetadataImage& image, NodeId self) {
  if (image.is_live(self)) return self;
  const std::vector<NodeId> live = image.live_brokers();
  if (live.empty()) return kNoNode;
  static thread_local std::mt19937 rng(std::random_device{}());
  return live[std::uniform_int_distribution<size_t>(0, live.size() - 1)(rng)];
}

}  // namespace runnel::broker
