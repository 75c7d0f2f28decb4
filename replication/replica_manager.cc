#include "replication/replica_manager.h"

#include "broker/logging.h"
#include "broker/topic_table.h"

namespace runnel::replication {

ReplicaManager::ReplicaManager(asio::any_io_executor ex, const broker::TopicTable& topics, NodeId local_node)
    : topics_(topics), local_node_(local_node), produce_purgatory_(ex), fetch_purgatory_(ex) {}

std::shared_ptr<Partition> ReplicaManager::get_partition(const std::string& topic, PartitionId id) const {
  return topics_.partition(topic, id.value());
}

bool ReplicaManager::become_leader_or_follower(const std::string& topic, PartitionId id,
                                               const PartitionState& state) {
  auto partition = get_partition(topic, id);
  if (!partition) return false;
  partition->become_leader_or_follower(state);
  return true;
}

void ReplicaManager::snapshot_producers_before_close() {
  for (const auto& [name, topic] : topics_.topics())
    for (const auto& partition : topic->partitions)
      if (auto ec = partition->snapshot_producers_before_close())
        RLOG_WARN("%s-%d: producer snapshot at close: %s", name.c_str(), partition->index(), ec.message().c_str());
}

void ReplicaManager::append_to_local_log(int16_t required_acks, std::span<AppendEntry> entries) {
  for (auto& e : entries) {
    if (!e.partition) continue;
    e.request.required_acks = required_acks;
    e.result = e.partition->append_records_as_leader(e.request);
  }
}

awaitable<void> ReplicaManager::append_records(int16_t required_acks, std::chrono::milliseconds timeout,
                                               std::span<AppendEntry> entries) {
  append_to_local_log(required_acks, entries);
  // Kafka's delayedProduceRequestRequired: acks=all and some partition
  // took the records (a duplicate waits too: its records may not be
  // committed yet).
  if (required_acks != -1) co_return;
  for (auto& e : entries) e.acks_pending = e.partition && e.result.ok();
  co_await wait_for_acks(produce_purgatory_, entries, timeout);
}

}  // namespace runnel::replication
