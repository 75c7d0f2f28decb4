// The store transactions that create, grow and delete a topic in a
// cluster: the topic's key and its partitions' keys change together, or
// not at all. Creation is conditioned on the topic key being absent (two
// brokers creating one name: one wins, the other answers
// TOPIC_ALREADY_EXISTS); growth and deletion on the topic key's revision
// (a concurrent change of the same topic makes one fail and re-read).
//
// Any broker's topic front end writes these; the brokers that host the
// partitions learn of them from the watch, like every other change.
#pragma once

#include <vector>

#include "cluster/metadata_image.h"
#include "cluster/metadata_store.h"

namespace runnel::cluster {

// `topic` with its partitions placed (replica_placement.h, new_partition()).
Txn create_topic_txn(const TopicImage& topic);
// Adds `added` after the topic's current partitions.
Txn add_partitions_txn(const TopicImage& topic, const std::vector<PartitionRegistration>& added);
// The topic's key and every partition key.
Txn delete_topic_txn(const TopicImage& topic);
// New overrides for the topic.
Txn set_topic_configs_txn(const TopicImage& topic, TopicConfigs configs);

}  // namespace runnel::cluster
