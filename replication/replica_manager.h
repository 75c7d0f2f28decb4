// Kafka's ReplicaManager: the partitions this broker hosts and the way
// requests reach them. Produce appends through append_records, Fetch reads
// through fetch_messages; ListOffsets, DeleteRecords, OffsetForLeaderEpoch,
// DescribeLogDirs and Metadata find their partition with get_partition and
// ask it (replication/partition.h holds the rules). It owns the three
// purgatories where requests wait on partitions: acks=all produces for the
// high watermark, long-poll fetches for data, DeleteRecords for the low
// watermark.
//
// It owns the partitions this broker hosts (Kafka's allPartitions): they are
// added as their logs are opened (a single node's topic front end, or
// broker/hosted_partitions.h following a cluster's image) and removed
// before their logs are. What the cluster says about topics (names, ids,
// partition counts, configs) is the metadata's, not this manager's: the
// topic table and the metadata cache. The cluster's metadata drives leadership:
// apply_delta takes each change of the metadata cache's image (Kafka's
// ReplicaManager.applyDelta). On one node a partition is already led by
// this node, alone in the ISR, when it is opened, and the image says the
// same, so applying it changes nothing.
//
// Event-loop state, as the partitions are.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/clock.h"
#include "base/ids.h"
#include "broker/asio.h"
#include "broker/delayed_operations.h"
#include "cluster/metadata_cache.h"
#include "cluster/metadata_delta.h"
#include "replication/delayed_delete_records.h"
#include "replication/delayed_fetch.h"
#include "replication/delayed_produce.h"
#include "replication/partition.h"

namespace runnel::replication {

using broker::awaitable;
namespace asio = broker::asio;

class ReplicaManager {
 public:
  // `metadata`: what the cluster knows, for telling a partition hosted
  // elsewhere from one that does not exist.
  ReplicaManager(asio::any_io_executor ex, const cluster::MetadataCache& metadata, NodeId local_node);
  ReplicaManager(const ReplicaManager&) = delete;
  ReplicaManager& operator=(const ReplicaManager&) = delete;

  NodeId local_node() const { return local_node_; }
  // Kafka's allTopicsStats: the BrokerTopicMetrics of every hosted partition
  // (each partition counts its own too), never reset by a topic's removal.
  const broker::admin::TopicCounters& all_topics_counters() const { return all_topics_; }

  // The hosted partition, or null (Kafka's getPartitionOrError answers
  // UNKNOWN_TOPIC_OR_PARTITION for it).
  std::shared_ptr<Partition> get_partition(const std::string& topic, PartitionId id) const;
  // Kafka's getPartitionOrError for a partition not hosted here: one the
  // metadata knows (a cluster's partition on other brokers) is
  // NOT_LEADER_OR_FOLLOWER, so the client refreshes its metadata and goes
  // to the leader; any other UNKNOWN_TOPIC_OR_PARTITION.
  ErrorCode missing_partition_error(const std::string& topic, PartitionId id) const;

  // Hosting. A partition is added once its log is open, in the slot of its
  // topic and index, and removed before its log is closed or removed.
  void add_partition(std::shared_ptr<Partition> partition);
  std::shared_ptr<Partition> remove_partition(const std::string& topic, PartitionId id);
  // Removes every hosted partition of the topic; they are returned in index order.
  std::vector<std::shared_ptr<Partition>> remove_topic(const std::string& topic);
  // Every hosted partition of the topic, in index order.
  std::vector<std::shared_ptr<Partition>> partitions(const std::string& topic) const;
  // Each hosted partition of every topic.
  template <typename F>
  void for_each_partition(F&& f) const {
    for (const auto& [_, slots] : all_partitions_)
      for (const auto& p : slots)
        if (p) f(p);
  }
  // A topic's config changed: its hosted partitions' logs take it.
  void set_log_config(const std::string& topic, const storage::LogConfig& config);

  // Applies the metadata's view of a hosted partition (Kafka's
  // becomeLeaderOrFollower: makeLeaders / makeFollowers). False when the
  // partition is not hosted here.
  bool become_leader_or_follower(const std::string& topic, PartitionId id, const PartitionState& state);
  // Kafka's applyDelta: this broker's partitions whose registration changed
  // lead or follow as the new image says.
  void apply_delta(const cluster::MetadataDelta& delta);

  // Kafka's appendToLocalLog: appends each entry's records as leader, in
  // order; an entry with no partition keeps the result it carries.
  void append_to_local_log(int16_t required_acks, std::span<AppendEntry> entries);
  // Kafka's appendRecords: append_to_local_log, then for acks=all a delayed
  // produce that completes once every appended partition's high watermark
  // passes its records, or fails them with REQUEST_TIMED_OUT after
  // `timeout`. The results are final when it returns. `appended`, if set,
  // is called once the records are in the logs, before any wait.
  awaitable<void> append_records(int16_t required_acks, std::chrono::milliseconds timeout,
                                 std::span<AppendEntry> entries, const std::function<void()>& appended = {});

  // Kafka's fetchMessages: reads, and waits in the fetch purgatory while
  // waiting may improve the answer (after_read: replication::fetch_messages).
  awaitable<void> fetch_messages(std::span<FetchPartition> partitions, const FetchParams& params,
                                 std::function<void()> after_read = {}) {
    return replication::fetch_messages(fetch_purgatory_, partitions, params, std::move(after_read));
  }

  // Kafka's deleteRecords after deleteRecordsOnLocalLog (the handler
  // deletes on the blocking pool): waits in the delete-records purgatory
  // until each deleted partition's low watermark reaches its required
  // offset, or `timeout` (replication/delayed_delete_records.h). The
  // entries hold the answer when it completes.
  awaitable<void> delete_records(std::chrono::milliseconds timeout, std::span<DeleteRecordsEntry> entries,
                                 IsLiveBroker is_live) {
    return wait_for_low_watermark(delete_records_purgatory_, entries, timeout, std::move(is_live), hosted_here());
  }

  broker::DelayedOperations& fetch_purgatory() { return fetch_purgatory_; }
  broker::DelayedOperations& produce_purgatory() { return produce_purgatory_; }
  broker::DelayedOperations& delete_records_purgatory() { return delete_records_purgatory_; }
  // Shutdown: waiting fetches answer with what they have.
  void expire_fetches() { fetch_purgatory_.expire_all(); }
  // Shutdown, once no request is served and before the logs close: each
  // partition's producer state goes into a snapshot at its log end.
  void snapshot_producers_before_close();

 private:
  // Kafka's getPartition for a waiting operation: the partition is still
  // the one hosted under its name.
  IsHosted hosted_here() const;

  const cluster::MetadataCache& metadata_;
  NodeId local_node_;
  broker::admin::TopicCounters all_topics_;
  // By topic name, one slot per partition index up to the highest hosted
  // (null where this broker is not a replica).
  std::unordered_map<std::string, std::vector<std::shared_ptr<Partition>>> all_partitions_;
  broker::DelayedOperations produce_purgatory_;
  broker::DelayedOperations fetch_purgatory_;
  broker::DelayedOperations delete_records_purgatory_;
};

}  // namespace runnel::replication
