#include "cluster/topic_writes.h"

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"

namespace runnel::cluster {

Txn create_topic_txn(const TopicImage& topic) {
  Txn txn;
  txn.compares.push_back({keys::topic(topic.name), kAbsent});
  txn.ops.push_back(Op::put(keys::topic(topic.name), encode_topic(topic)));
  for (size_t i = 0; i < topic.partitions.size(); ++i)
    txn.ops.push_back(Op::put(keys::partition(topic.name, static_cast<int32_t>(i)), encode_partition(topic.partitions[i])));
  return txn;
}

Txn add_partitions_txn(const TopicImage& topic, const std::vector<PartitionRegistration>& added) {
  TopicImage grown = topic;
  grown.partitions.insert(grown.partitions.end(), added.begin(), added.end());
  Txn txn;
  txn.compares.push_back({keys::topic(topic.name), topic.mod_revision});
  txn.ops.push_back(Op::put(keys::topic(topic.name), encode_topic(grown)));
  for (size_t i = topic.partitions.size(); i < grown.partitions.size(); ++i)
    txn.ops.push_back(Op::put(keys::partition(topic.name, static_cast<int32_t>(i)), encode_partition(grown.partitions[i])));
  return txn;
}

Txn delete_topic_txn(const TopicImage& topic) {
  Txn txn;
  txn.compares.push_back({keys::topic(topic.name), topic.mod_revision});
  txn.ops.push_back(Op::erase(keys::topic(topic.name)));
  for (size_t i = 0; i < topic.partitions.size(); ++i)
    txn.ops.push_back(Op::erase(keys::partition(topic.name, static_cast<int32_t>(i))));
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

}  // namespace runnel::cluster
