#include "broker/described_partition.h"

#include "replication/replica_manager.h"

namespace runnel::broker {

namespace {

std::vector<int32_t> node_ids(const std::vector<NodeId>& nodes) {
  std::vector<int32_t> out;
  out.reserve(nodes.size());
  for (NodeId n : nodes) out.push_back(n.value());
  return out;
}

}  // namespace

DescribedPartition describe_partition(const cluster::TopicImage& t, PartitionId id, const cluster::MetadataImage& image,
                                      const replication::ReplicaManager& replicas) {
  const cluster::PartitionRegistration& reg = t.partitions.at(static_cast<size_t>(id.value()));
  DescribedPartition out;
  out.leader_id = reg.leader.value();
  out.leader_epoch = reg.leader_epoch.value();
  out.replica_nodes = node_ids(reg.replicas);
  out.isr_nodes = node_ids(reg.isr);
  for (NodeId r : reg.replicas)
    if (!image.is_live(r)) out.offline_replicas.push_back(r.value());
  // A leader whose registration lapsed (or is fenced) until the controller
  // re-elects: Kafka's controller fences and re-elects in one batch, and its
  // metadata cache answers a leader it does not list as no leader. Named
  // here, it would be a leader missing from Metadata's brokers: kafkajs
  // then fetches the partition from no broker, without error, and does not
  // ask again until metadata.max.age.ms (5 min).
  if (!image.is_live(reg.leader)) out.leader_id = -1;
  if (auto part = replicas.get_partition(t.name, id); part && part->log().dir_offline()) {
    // No leader (clients wait and ask again), the last ISR member kept,
    // the replica listed offline.
    out.log_dir_offline = true;
    out.leader_id = -1;
    out.offline_replicas = out.replica_nodes;
  }
  return out;
}

}  // namespace runnel::broker
