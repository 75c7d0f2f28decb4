#include "replication/replica_manager.h"

#include "broker/logging.h"

namespace runnel::replication {

ReplicaManager::ReplicaManager(asio::any_io_executor ex, const cluster::MetadataCache& metadata, NodeId local_node)
    : metadata_(metadata),
      local_node_(local_node),
      produce_purgatory_(ex),
      fetch_purgatory_(ex),
      delete_records_purgatory_(ex) {}

std::shared_ptr<Partition> ReplicaManager::get_partition(const std::string& topic, PartitionId id) const {
  auto it = all_partitions_.find(topic);
  if (it == all_partitions_.end() || id.value() < 0 || static_cast<size_t>(id.value()) >= it->second.size())
    return nullptr;
  return it->second[static_cast<size_t>(id.value())];
}

IsHosted ReplicaManager::hosted_here() const {
  return [this](const Partition& p) { return get_partition(p.topic(), p.id()).get() == &p; };
}

ErrorCode ReplicaManager::missing_partition_error(const std::string& topic, PartitionId id) const {
  return metadata_->partition(topic, id) ? ErrorCode::not_leader_or_follower : ErrorCode::unknown_topic_or_partition;
}

void ReplicaManager::add_partition(std::shared_ptr<Partition> partition) {
  partition->count_all_topics_in(&all_topics_);
  auto& slots = all_partitions_[partition->topic()];
  const auto i = static_cast<size_t>(partition->index());
  if (i >= slots.size()) slots.resize(i + 1);
  slots[i] = std::move(partition);
}

std::shared_ptr<Partition> ReplicaManager::remove_partition(const std::string& topic, PartitionId id) {
  auto it = all_partitions_.find(topic);
  if (it == all_partitions_.end() || id.value() < 0 || static_cast<size_t>(id.value()) >= it->second.size())
    return nullptr;
  auto removed = std::exchange(it->second[static_cast<size_t>(id.value())], nullptr);
  auto& slots = it->second;
  while (!slots.empty() && !slots.back()) slots.pop_back();
  if (slots.empty()) all_partitions_.erase(it);
  return removed;
}

std::vector<std::shared_ptr<Partition>> ReplicaManager::remove_topic(const std::string& topic) {
  std::vector<std::shared_ptr<Partition>> removed = partitions(topic);
  all_partitions_.erase(topic);
  return removed;
}

std::vector<std::shared_ptr<Partition>> ReplicaManager::partitions(const std::string& topic) const {
  std::vector<std::shared_ptr<Partition>> out;
  if (auto it = all_partitions_.find(topic); it != all_partitions_.end())
    for (const auto& p : it->second)
      if (p) out.push_back(p);
  return out;
}

void ReplicaManager::set_log_config(const std::string& topic, const storage::LogConfig& config) {
  if (auto it = all_partitions_.find(topic); it != all_partitions_.end())
    for (const auto& p : it->second)
      if (p) p->log().set_config(config);
}

bool ReplicaManager::become_leader_or_follower(const std::string& topic, PartitionId id,
                                               const PartitionState& state) {
  auto partition = get_partition(topic, id);
  if (!partition) return false;
  partition->become_leader_or_follower(state);
  return true;
}

void ReplicaManager::apply_delta(const cluster::MetadataDelta& delta) {
  const cluster::LocalChanges changes = delta.local_changes(local_node_);
  auto apply = [this](const cluster::LocalPartition& p) {
    const PartitionState state{p.registration.leader, p.registration.leader_epoch, p.registration.replicas,
                               p.registration.isr};
    if (!become_leader_or_follower(p.topic, p.partition, state))
      RLOG_WARN("%s-%d: the metadata names this broker a replica, but it does not host the partition", p.topic.c_str(),
                p.partition.value());
  };
  for (const auto& p : changes.leaders) apply(p);
  for (const auto& p : changes.followers) apply(p);
  // changes.deletes: nothing to do here on one node. A topic leaves the
  // image when the topic front end unpublishes it, and the front end then
  // removes its logs itself (the part of Kafka's stopPartitions it does
  // today); a reassignment off this broker needs other brokers.
}

void ReplicaManager::snapshot_producers_before_close() {
  for_each_partition([](const std::shared_ptr<Partition>& partition) {
    if (auto ec = partition->snapshot_producers_before_close())
      RLOG_WARN("%s-%d: producer snapshot at close: %s", partition->topic().c_str(), partition->index(),
                ec.message().c_str());
  });
}

void ReplicaManager::append_to_local_log(int16_t required_acks, std::span<AppendEntry> entries) {
  for (auto& e : entries) {
    if (!e.partition) continue;
    e.request.required_acks = required_acks;
    e.result = e.partition->append_records_as_leader(e.request);
  }
}

awaitable<void> ReplicaManager::append_records(int16_t required_acks, std::chrono::milliseconds timeout,
                                               std::span<AppendEntry> entries, const std::function<void()>& appended) {
  append_to_local_log(required_acks, entries);
  if (appended) appended();
  // Kafka's delayedProduceRequestRequired: acks=all and some partition
  // took the records (a duplicate waits too: its records may not be
  // committed yet).
  if (required_acks != -1) co_return;
  for (auto& e : entries) e.acks_pending = e.partition && e.result.ok();
  co_await wait_for_acks(produce_purgatory_, entries, timeout);
}

}  // namespace runnel::replication
