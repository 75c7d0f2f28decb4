#include "cli/cluster.h"

#include <algorithm>
#include <thread>

#include "protocol/messages/03_metadata.h"
#include "protocol/messages/10_find_coordinator.h"

namespace runnel::cli {

using namespace protocol;

Cluster::Cluster(ClientConfig config) : config_(std::move(config)) {}

BrokerConnection& Cluster::connect_bootstrap() {
  if (bootstrap_ && bootstrap_->is_open()) return *bootstrap_;
  bootstrap_.reset();
  std::string errors;
  for (const auto& hp : config_.bootstrap()) {
    try {
      bootstrap_ = std::make_unique<BrokerConnection>(hp, config_);
      return *bootstrap_;
    } catch (const ConnectError& e) {
      errors += std::string(errors.empty() ? "" : "; ") + e.what();
    }
  }
  throw ConnectError("no bootstrap broker reachable (" + errors + ")");
}

BrokerConnection& Cluster::any() { return connect_bootstrap(); }

ClusterMetadata Cluster::metadata(const std::optional<std::vector<std::string>>& topics) {
  BrokerConnection& conn = any();
  MetadataRequest req;
  req.allow_auto_topic_creation = false;
  if (topics) {
    req.topics.emplace();
    for (const auto& t : *topics) {
      MetadataRequest::MetadataRequestTopic rt;
      rt.name = t;
      req.topics->push_back(rt);
    }
  } else {
    req.topics = std::nullopt;
  }
  int16_t v = conn.version<MetadataApi>();
  // v0 means "every topic" by an empty list; a null list is v1+.
  if (v == 0) throw KafkaError(35, "Metadata", "the broker speaks only Metadata v0");
  auto resp = conn.call<MetadataApi>(req, v);
  if (resp.error_code) check(resp.error_code, "Metadata");
  ClusterMetadata md;
  md.cluster_id = resp.cluster_id;
  md.controller_id = resp.controller_id;
  for (const auto& b : resp.brokers) md.brokers.push_back({b.node_id, b.host, b.port, b.rack});
  std::sort(md.brokers.begin(), md.brokers.end(), [](auto& a, auto& b) { return a.node_id < b.node_id; });
  for (const auto& t : resp.topics) {
    TopicInfo ti;
    ti.name = t.name.value_or("");
    ti.id = t.topic_id;
    ti.internal = t.is_internal;
    ti.error_code = t.error_code;
    for (const auto& p : t.partitions)
      ti.partitions.push_back({p.partition_index, p.error_code, p.leader_id, p.leader_epoch, p.replica_nodes,
                               p.isr_nodes, p.offline_replicas});
    std::sort(ti.partitions.begin(), ti.partitions.end(), [](auto& a, auto& b) { return a.partition < b.partition; });
    md.topics[ti.name] = std::move(ti);
  }
  // Brokers and leaders are what later routing needs; keep the latest.
  known_.cluster_id = md.cluster_id;
  known_.controller_id = md.controller_id;
  known_.brokers = md.brokers;
  for (const auto& [name, t] : md.topics) known_.topics[name] = t;
  have_metadata_ = true;
  return md;
}

TopicInfo Cluster::topic(const std::string& name) {
  auto md = metadata(std::vector<std::string>{name});
  auto it = md.topics.find(name);
  if (it == md.topics.end()) throw KafkaError(3, "topic '" + name + "'", "not in the Metadata response");
  check(it->second.error_code, "topic '" + name + "'");
  return it->second;
}

BrokerConnection& Cluster::broker(int32_t node_id) {
  auto& slot = brokers_[node_id];
  if (slot && slot->is_open()) return *slot;
  slot.reset();
  if (!have_metadata_) metadata(std::vector<std::string>{});
  for (const auto& b : known_.brokers) {
    if (b.node_id != node_id) continue;
    slot = std::make_unique<BrokerConnection>(HostPort{b.host, static_cast<uint16_t>(b.port)}, config_);
    return *slot;
  }
  throw ConnectError("broker " + std::to_string(node_id) + " is not in the cluster's metadata");
}

BrokerConnection& Cluster::controller() {
  if (!have_metadata_) metadata(std::vector<std::string>{});
  if (known_.controller_id >= 0) {
    try {
      return broker(known_.controller_id);
    } catch (const ConnectError&) {
      // Any broker forwards admin requests to the controller (KRaft).
    }
  }
  return any();
}

BrokerConnection& Cluster::coordinator(const std::string& group_id) {
  auto it = coordinators_.find(group_id);
  if (it != coordinators_.end()) return broker(it->second);
  BrokerConnection& conn = any();
  FindCoordinatorRequest req;
  req.key_type = 0;
  int16_t v = conn.version<FindCoordinatorApi>();
  int32_t node = -1;
  if (v >= 4) {
    req.coordinator_keys = {group_id};
    auto resp = conn.call<FindCoordinatorApi>(req, v);
    if (resp.coordinators.empty()) throw KafkaError(15, "FindCoordinator for group '" + group_id + "'");
    const auto& c = resp.coordinators.front();
    check(c.error_code, "FindCoordinator for group '" + group_id + "'", c.error_message.value_or(""));
    node = c.node_id;
  } else {
    req.key = group_id;
    auto resp = conn.call<FindCoordinatorApi>(req, v);
    check(resp.error_code, "FindCoordinator for group '" + group_id + "'", resp.error_message.value_or(""));
    node = resp.node_id;
  }
  coordinators_[group_id] = node;
  return broker(node);
}

BrokerConnection& Cluster::leader(const std::string& topic, int32_t partition) {
  auto find = [&]() -> int32_t {
    auto it = known_.topics.find(topic);
    if (it == known_.topics.end()) return -2;
    for (const auto& p : it->second.partitions)
      if (p.partition == partition) return p.error_code ? -1 : p.leader;
    return -2;
  };
  int32_t node = find();
  if (node < 0) {
    metadata(std::vector<std::string>{topic});
    node = find();
  }
  if (node == -2) throw KafkaError(3, "partition " + topic + "/" + std::to_string(partition));
  if (node < 0) throw KafkaError(5, "partition " + topic + "/" + std::to_string(partition));
  return broker(node);
}

void Cluster::forget_all() {
  brokers_.clear();
  coordinators_.clear();
  known_.topics.clear();
  if (bootstrap_ && !bootstrap_->is_open()) bootstrap_.reset();
}

void Cluster::backoff(int attempt) const {
  auto delay = config_.retry_backoff() * (1 << std::min(attempt, 5));
  std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(delay, std::chrono::milliseconds(1000)));
}

}  // namespace runnel::cli
