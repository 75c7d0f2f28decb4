// KIP-951: a NOT_LEADER_OR_FOLLOWER answer to Produce (v10+) or Fetch
// (v16+) says where the partition's leader is now -- its id and epoch, and
// its endpoint for the listener the request came in on -- so the client
// redirects without a Metadata round trip (Kafka's
// KafkaApis.getCurrentLeader). Read from the metadata image.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cluster/metadata_image.h"

namespace runnel::broker {

struct LeaderHint {
  int32_t leader_id = -1;
  int32_t leader_epoch = -1;
};

class LeaderHints {
 public:
  LeaderHints(const cluster::MetadataImage& image, const std::string& listener) : image_(image), listener_(listener) {}

  // The partition's leader as the image has it (-1s when it has none); its
  // endpoint, when the image knows it, is remembered for endpoints().
  LeaderHint current_leader(const std::string& topic, int32_t partition);
  // The endpoints of every leader handed out, by node id, with its rack:
  // Produce's and Fetch's NodeEndpoints.
  template <typename NodeEndpoint>
  void add_endpoints(std::vector<NodeEndpoint>& out) const {
    for (const auto& [id, e] : endpoints_) out.push_back({id, e.host, e.port, rack(id), {}});
  }

 private:
  std::optional<std::string> rack(int32_t node) const;

  const cluster::MetadataImage& image_;
  const std::string& listener_;
  std::map<int32_t, cluster::BrokerEndpoint> endpoints_;
};

}  // namespace runnel::broker
