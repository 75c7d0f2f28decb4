#include "broker/metadata_publisher.h"

#include "broker/security_config.h"

namespace runnel::broker {

cluster::BrokerRegistration broker_registration(const BrokerConfig& config, const std::vector<Listener>& advertised) {
  cluster::BrokerRegistration b;
  b.id = NodeId(config.node_id());
  for (const auto& l : advertised)
    b.endpoints.push_back({l.name, listener_security_protocol(config, l.name), l.host, l.port});
  b.rack = config.typed().broker_rack;
  return b;
}

cluster::TopicImage topic_image(const Topic& topic, const replication::ReplicaManager& hosted) {
  cluster::TopicImage t;
  t.name = topic.name;
  t.id = topic.id;
  t.internal = topic.internal;
  t.configs = cluster::TopicConfigs(topic.overrides.begin(), topic.overrides.end());
  t.partitions.reserve(static_cast<size_t>(topic.partition_count));
  for (const auto& p : hosted.partitions(topic.name)) {
    cluster::PartitionRegistration r;
    r.replicas = p->replicas();
    r.isr = p->isr();
    r.leader = p->leader_id();
    r.leader_epoch = p->leader_epoch();
    t.partitions.push_back(std::move(r));
  }
  return t;
}

const cluster::BrokerEndpoint* endpoint_for(const cluster::BrokerRegistration& broker, const std::string& listener) {
  for (const auto& e : broker.endpoints)
    if (e.listener == listener) return &e;
  return broker.endpoints.empty() ? nullptr : &broker.endpoints.front();
}

MetadataPublisher::MetadataPublisher(cluster::MetadataCache& cache, std::string cluster_id, NodeId self)
    : cache_(cache), cluster_id_(std::move(cluster_id)), self_(self) {}

void MetadataPublisher::publish_all(cluster::BrokerRegistration self, const TopicTable& topics,
                                    const replication::ReplicaManager& hosted) {
  std::vector<cluster::TopicImage> all;
  all.reserve(topics.topics().size());
  for (const auto& [_, topic] : topics.topics()) all.push_back(topic_image(*topic, hosted));
  publish(cluster::MetadataImage(cluster_id_).with_controller(self_).with_broker(std::move(self)).with_topics(std::move(all)));
}

void MetadataPublisher::broker_changed(cluster::BrokerRegistration self) { publish(cache_->with_broker(std::move(self))); }

void MetadataPublisher::topic_changed(const TopicTable& topics, const replication::ReplicaManager& hosted,
                                      const std::string& name) {
  auto topic = topics.find(name);
  publish(topic ? cache_->with_topic(topic_image(*topic, hosted)) : cache_->without_topic(name));
}

void MetadataPublisher::publish(const cluster::MetadataImage& next) {
  cache_.publish(std::make_shared<const cluster::MetadataImage>(next.with_revision(++revision_)));
}

}  // namespace runnel::broker
