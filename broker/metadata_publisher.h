// The single node's metadata image: what this broker hosts, told the way a
// cluster's metadata tells it (cluster/metadata_image.h), and published into
// the metadata cache that handlers read and the replica manager subscribes
// to. Kafka's brokers get their image from the controller's metadata log;
// a single Runnel node is its own controller and builds it from its topic
// table (broker/topic_table.h), the partitions it hosts (the replica
// manager's) and its config.
//
// One path: topic_image() is how a topic enters the image; after startup
// every image is the previous one with one topic or this broker replaced,
// so it shares every topic the change did not touch. The revision counts
// publishes (a single node has no store revision to carry).
// Event-loop only, as the topic table and the cache are.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "broker/config.h"
#include "broker/topic_table.h"
#include "cluster/metadata_cache.h"

namespace runnel::broker {

// This broker as it registers: its node id, its advertised listeners with
// their security protocols, broker.rack. Never fenced.
cluster::BrokerRegistration broker_registration(const BrokerConfig& config, const std::vector<Listener>& advertised);

// A topic as the image carries it: its overrides as its configs, each
// partition's leader, leader epoch, replicas and ISR as its
// replication::Partition holds them (a single node hosts them all).
cluster::TopicImage topic_image(const Topic& topic, const replication::ReplicaManager& hosted);

// The endpoint a client that came in on `listener` is told to use: the one
// of that name, else the broker's first (as Broker::advertised_listener);
// null when the broker has none.
const cluster::BrokerEndpoint* endpoint_for(const cluster::BrokerRegistration& broker, const std::string& listener);

class MetadataPublisher {
 public:
  MetadataPublisher(cluster::MetadataCache& cache, std::string cluster_id, NodeId self);

  // At startup: this broker, as the controller, and every loaded topic.
  void publish_all(cluster::BrokerRegistration self, const TopicTable& topics, const replication::ReplicaManager& hosted);
  // After the broker's registration changed (a listener bound its port).
  void broker_changed(cluster::BrokerRegistration self);
  // After a topic was created, deleted, grown or given new overrides: the
  // topic as the table has it now, or gone if the table no longer has it.
  void topic_changed(const TopicTable& topics, const replication::ReplicaManager& hosted, const std::string& name);

 private:
  void publish(const cluster::MetadataImage& next);

  cluster::MetadataCache& cache_;
  std::string cluster_id_;
  NodeId self_;
  int64_t revision_ = 0;
};

}  // namespace runnel::broker
