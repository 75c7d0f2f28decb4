// What the cluster says, at one point in its history: the brokers, the
// controller, every topic with its partitions' replicas, ISR, leader and
// epochs, and the topic configs. Kafka's MetadataImage (KRaft), Redpanda's
// topic table. Immutable: a change builds a new image that shares every
// topic it did not touch, and MetadataDelta (metadata_delta.h) says what
// differs between two images, for those that act on changes.
//
// On one node the image is built from the local metadata store's files;
// in a cluster from etcd's keys. Handlers read it through the metadata
// cache (metadata_cache.h); nothing here does I/O.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/ids.h"
#include "protocol/codec/types.h"

namespace runnel::cluster {

using protocol::Uuid;
using TopicConfigs = std::map<std::string, std::string>;

// Kafka's internal topics (Topic.INTERNAL_TOPICS): the coordinators' own.
inline bool is_internal_topic(const std::string& name) {
  return name == "__consumer_offsets" || name == "__transaction_state";
}

struct BrokerEndpoint {
  std::string listener;           // "PLAINTEXT", or the listener's name
  std::string security_protocol;  // PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL
  std::string host;
  uint16_t port = 0;
  bool operator==(const BrokerEndpoint&) const = default;
};

// A broker as it registered (Kafka's BrokerRegistration).
struct BrokerRegistration {
  NodeId id;
  // Grows at every registration, so a restarted broker is told apart from
  // its old self (Kafka's broker epoch, KIP-380; replica fetches carry it):
  // the create revision of its registration key.
  int64_t epoch = 0;
  std::vector<BrokerEndpoint> endpoints;
  std::optional<std::string> rack;
  // Registered but not yet (or no longer) allowed to lead or be in an ISR.
  bool fenced = false;
  bool operator==(const BrokerRegistration&) const = default;
};

// One partition's replica assignment and leadership (Kafka's
// PartitionRegistration). The controller writes the replicas, the leader
// and the leader epoch; the leader writes its ISR (AlterPartition); each
// write bumps the partition epoch, so writes conditioned on it are fenced.
// During a reassignment (partition_reassignment.h) the replicas are the
// target's followed by those being removed; adding_replicas and
// removing_replicas say which is which, as Kafka's do.
struct PartitionRegistration {
  std::vector<NodeId> replicas;
  std::vector<NodeId> isr;
  std::vector<NodeId> adding_replicas;
  std::vector<NodeId> removing_replicas;
  NodeId leader = kNoNode;
  LeaderEpoch leader_epoch{0};
  int32_t partition_epoch = 0;
  // The revision of the partition's key in the store, which a write of it
  // compares against; 0 when the key is absent (a single node's topics).
  int64_t mod_revision = 0;
  bool operator==(const PartitionRegistration&) const = default;

  bool has_leader() const { return leader != kNoNode; }
  bool reassigning() const { return !adding_replicas.empty() || !removing_replicas.empty(); }
  bool is_replica(NodeId n) const;
  bool in_isr(NodeId n) const;
};

struct TopicImage {
  std::string name;
  Uuid id;
  bool internal = false;
  TopicConfigs configs;  // the topic's overrides only; defaults live in the broker config
  std::vector<PartitionRegistration> partitions;
  int64_t mod_revision = 0;     // the topic key's revision in the store
  int64_t create_revision = 0;  // ... and its create revision: this incarnation of the name
  bool operator==(const TopicImage&) const = default;

  const PartitionRegistration* partition(PartitionId p) const {
    auto i = p.value();
    return i >= 0 && i < static_cast<int32_t>(partitions.size()) ? &partitions[static_cast<size_t>(i)] : nullptr;
  }
};

using TopicPtr = std::shared_ptr<const TopicImage>;

class MetadataImage {
 public:
  MetadataImage() = default;
  explicit MetadataImage(std::string cluster_id) : cluster_id_(std::move(cluster_id)) {}

  const std::string& cluster_id() const { return cluster_id_; }
  // The store's revision this image reflects (etcd's revision; a counter
  // of local writes on one node): later images have larger revisions.
  int64_t revision() const { return revision_; }
  std::optional<NodeId> controller() const { return controller_; }

  const std::map<NodeId, BrokerRegistration>& brokers() const { return brokers_; }
  const BrokerRegistration* broker(NodeId id) const;
  // Registered and not fenced: the brokers that may lead and replicate.
  std::vector<NodeId> live_brokers() const;
  bool is_live(NodeId id) const;

  const std::map<std::string, TopicPtr>& topics() const { return by_name_; }
  TopicPtr topic(const std::string& name) const;
  TopicPtr topic(const Uuid& id) const;
  const PartitionRegistration* partition(const std::string& topic, PartitionId p) const;

  // Copies with one change. A copy shares every topic it does not replace.
  MetadataImage with_revision(int64_t revision) const;
  MetadataImage with_controller(std::optional<NodeId> controller) const;
  MetadataImage with_broker(BrokerRegistration broker) const;
  MetadataImage without_broker(NodeId id) const;
  // Adds or replaces the topic of that name (a new id under an old name is
  // a new topic: the old one is deleted).
  MetadataImage with_topic(TopicImage topic) const;
  // with_topic for each, in one copy (a whole store loaded at once).
  MetadataImage with_topics(std::vector<TopicImage> topics) const;
  MetadataImage without_topic(const std::string& name) const;
  MetadataImage with_partition(const std::string& topic, PartitionId p, PartitionRegistration registration) const;

 private:
  void erase_topic(const std::string& name);
  void put_topic(TopicImage topic);

  std::string cluster_id_;
  int64_t revision_ = 0;
  std::optional<NodeId> controller_;
  std::map<NodeId, BrokerRegistration> brokers_;
  std::map<std::string, TopicPtr> by_name_;
  std::map<Uuid, TopicPtr> by_id_;
};

using ImagePtr = std::shared_ptr<const MetadataImage>;

}  // namespace runnel::cluster
