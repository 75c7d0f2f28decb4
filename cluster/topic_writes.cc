#include "cluster/topic_writes.h"

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"

namespace runnel::cluster {

Txn create_topic_txn(const TopicImage& topic) {
  Txn txn;
  txn.compares.push_back({keys::topic(topic.name), kAbsent});
  txn.ops.push_back(Op::put(keys::topic(topic.name), encode_topic(topic)));
  return txn;
}

Txn add_partitions_txn(const TopicImage& topic, const std::vector<PartitionRegistration>& added) {
  TopicImage grown = topic;
  grown.partitions.insert(grown.partitions.end(), added.begin(), added.end());
  Txn txn;
  txn.compares.push_back({keys::topic(topic.name), topic.mod_revision});
  txn.ops.push_back(Op::put(keys::topic(topic.name), encode_topic(grown)));
  return txn;
}

Txn delete_topic_txn(const TopicImage& topic) {
  Txn txn;
  txn.compares.push_back({keys::topic(topic.name), topic.mod_revision});
  txn.ops.push_back(Op::erase(keys::topic(topic.name)));
  txn.ops.push_back(Op::erase_prefix(keys::partitions_of(topic.name)));
  return txn;
}

Txn set_topic_configs_txn(const TopicImage& topic, TopicConfigs configs) {
  TopicImage changed = topic;
  changed.configs = std::move(configs);
  Txn txn;
  txn.compares.push_back({keys::topic(topic.name), topic.mod_revision});
  txn.ops.push_back(Op::put(keys::topic(topic.name), encode_topic(changed)));
  return txn;
}

void add_partition_change(Txn& txn, const std::string& topic, Revision topic_created, int32_t partition,
                          const PartitionRegistration& current, const PartitionRegistration& next) {
  const std::string key = keys::partition(topic, partition);
  txn.compares.push_back({key, current.mod_revision});
  Compare same_topic = Compare::created_at(keys::topic(topic), topic_created);
  bool known = false;
  for (const auto& c : txn.compares) known = known || (c.key == same_topic.key && c.target == same_topic.target);
  if (!known) txn.compares.push_back(std::move(same_topic));
  txn.ops.push_back(Op::put(key, encode_partition(next)));
}

Txn partition_change_txn(const TopicImage& topic, PartitionId partition, const PartitionRegistration& next) {
  Txn txn;
  add_partition_change(txn, topic.name, topic.create_revision, partition.value(), *topic.partition(partition), next);
  return txn;
}

}  // namespace runnel::cluster
