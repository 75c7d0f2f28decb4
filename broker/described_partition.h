// One partition as the describing APIs report it (Metadata,
// DescribeTopicPartitions): leader, leader epoch, replicas and ISR from the
// metadata image; whether this broker's replica sits in an offline log dir
// from the replica manager. A partition whose only log dir went offline has
// no leader and lists its replica offline, as Kafka's controller publishes
// it once the log dir fails; each API says in its own way that the leader
// is missing. A replica whose broker is not registered, or is fenced, is
// offline too (Kafka's KRaftMetadataCache.getOfflineReplicas), and such a
// leader is no leader (its getAliveEndpoint): the leader named is always
// one of the live brokers Metadata lists.
#pragma once

#include <cstdint>
#include <vector>

#include "base/ids.h"
#include "cluster/metadata_image.h"

namespace runnel::replication {
class ReplicaManager;
}

namespace runnel::broker {

struct DescribedPartition {
  int32_t leader_id = -1;
  int32_t leader_epoch = -1;
  std::vector<int32_t> replica_nodes;
  std::vector<int32_t> isr_nodes;
  std::vector<int32_t> offline_replicas;
  bool log_dir_offline = false;  // then leader_id is -1
};

DescribedPartition describe_partition(const cluster::TopicImage& t, PartitionId id, const cluster::MetadataImage& image,
                                      const replication::ReplicaManager& replicas);

}  // namespace runnel::broker
