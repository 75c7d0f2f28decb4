// The store transactions that create, grow and delete a topic in a
// cluster, and that change one partition's state. A topic's creation and
// growth write only its key: the new partitions' states are in it
// (metadata_codec.h, "assignment") until each gets a key of its own at its
// first change; its deletion erases the topic key and every partition key
// (one prefix op), so none of these exceeds etcd's --max-txn-ops. Creation is conditioned on the topic key being absent (two
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

// One partition's change from `current` (as the image has it) to `next`,
// added to `txn`: it holds while the partition's key is still at current's
// revision (kAbsent: still in the state it was created in) and the topic
// is still the incarnation created at `topic_created` (a topic deleted and
// created again under its name starts without partition keys too, where a
// stale writer's "still absent" would otherwise hold). Two compares per
// partition at most, one per topic: a transaction of changes to n
// partitions of t topics has n ops and n + t compares.
void add_partition_change(Txn& txn, const std::string& topic, Revision topic_created, int32_t partition,
                          const PartitionRegistration& current, const PartitionRegistration& next);
// The same, alone: `partition` of `topic` (which the image holds) becomes `next`.
Txn partition_change_txn(const TopicImage& topic, PartitionId partition, const PartitionRegistration& next);

}  // namespace runnel::cluster
