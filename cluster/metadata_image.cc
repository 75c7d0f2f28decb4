#include "cluster/metadata_image.h"

#include <algorithm>
#include <stdexcept>

namespace runnel::cluster {

bool PartitionRegistration::is_replica(NodeId n) const {
  return std::find(replicas.begin(), replicas.end(), n) != replicas.end();
}

bool PartitionRegistration::in_isr(NodeId n) const { return std::find(isr.begin(), isr.end(), n) != isr.end(); }

const BrokerRegistration* MetadataImage::broker(NodeId id) const {
  auto it = brokers_.find(id);
  return it == brokers_.end() ? nullptr : &it->second;
}

bool MetadataImage::is_live(NodeId id) const {
  const BrokerRegistration* b = broker(id);
  return b && !b->fenced;
}

std::vector<NodeId> MetadataImage::live_brokers() const {
  std::vector<NodeId> out;
  for (const auto& [id, b] : brokers_)
    if (!b.fenced) out.push_back(id);
  return out;
}

TopicPtr MetadataImage::topic(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

TopicPtr MetadataImage::topic(const Uuid& id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const PartitionRegistration* MetadataImage::partition(const std::string& topic, PartitionId p) const {
  auto t = this->topic(topic);
  return t ? t->partition(p) : nullptr;
}

MetadataImage MetadataImage::with_revision(int64_t revision) const {
  MetadataImage next = *this;
  next.revision_ = revision;
  return next;
}

MetadataImage MetadataImage::with_controller(std::optional<NodeId> controller) const {
  MetadataImage next = *this;
  next.controller_ = controller;
  return next;
}

MetadataImage MetadataImage::with_broker(BrokerRegistration broker) const {
  MetadataImage next = *this;
  next.brokers_[broker.id] = std::move(broker);
  return next;
}

MetadataImage MetadataImage::without_broker(NodeId id) const {
  MetadataImage next = *this;
  next.brokers_.erase(id);
  return next;
}

MetadataImage MetadataImage::with_topic(TopicImage topic) const {
  MetadataImage next = *this;
  next.put_topic(std::move(topic));
  return next;
}

MetadataImage MetadataImage::with_topics(std::vector<TopicImage> topics) const {
  MetadataImage next = *this;
  for (auto& t : topics) next.put_topic(std::move(t));
  return next;
}

MetadataImage MetadataImage::without_topic(const std::string& name) const {
  MetadataImage next = *this;
  next.erase_topic(name);
  return next;
}

void MetadataImage::erase_topic(const std::string& name) {
  if (auto it = by_name_.find(name); it != by_name_.end()) {
    by_id_.erase(it->second->id);
    by_name_.erase(it);
  }
}

void MetadataImage::put_topic(TopicImage topic) {
  erase_topic(topic.name);
  if (auto other = by_id_.find(topic.id); other != by_id_.end())
    throw std::invalid_argument("topic id of " + topic.name + " already names " + other->second->name);
  auto ptr = std::make_shared<const TopicImage>(std::move(topic));
  by_name_[ptr->name] = ptr;
  by_id_[ptr->id] = ptr;
}

MetadataImage MetadataImage::with_partition(const std::string& topic, PartitionId p,
                                            PartitionRegistration registration) const {
  auto t = this->topic(topic);
  if (!t) throw std::invalid_argument("no topic " + topic);
  TopicImage changed = *t;
  if (p.value() < 0 || p.value() > static_cast<int32_t>(changed.partitions.size()))
    throw std::invalid_argument("partition " + std::to_string(p.value()) + " of " + topic + " would leave a gap");
  if (p.value() == static_cast<int32_t>(changed.partitions.size())) changed.partitions.push_back(std::move(registration));
  else changed.partitions[static_cast<size_t>(p.value())] = std::move(registration);
  MetadataImage next = *this;
  auto ptr = std::make_shared<const TopicImage>(std::move(changed));
  next.by_name_[topic] = ptr;
  next.by_id_[ptr->id] = ptr;
  return next;
}

}  // namespace runnel::cluster
