// Kafka's ReplicaManager: the partitions this broker hosts and the way
// requests reach them. Produce appends through append_records, Fetch reads
// through fetch_messages; ListOffsets, DeleteRecords, OffsetForLeaderEpoch,
// DescribeLogDirs and Metadata find their partition with get_partition and
// ask it (replication/partition.h holds the rules). It owns the two
// purgatories where requests wait on partitions: acks=all produces for the
// high watermark, long-poll fetches for data.
//
// Where the partitions live: still in the topic table's Topic (a view the
// metadata side publishes as topics are created, grown and deleted); this
// manager looks them up there. The cluster's metadata drives leadership:
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

#include "base/clock.h"
#include "base/ids.h"
#include "broker/asio.h"
#include "broker/delayed_operations.h"
#include "cluster/metadata_delta.h"
#include "replication/delayed_fetch.h"
#include "replication/delayed_produce.h"
#include "replication/partition.h"

namespace runnel::broker {
class TopicTable;
}

namespace runnel::replication {

using broker::awaitable;
namespace asio = broker::asio;

class ReplicaManager {
 public:
  ReplicaManager(asio::any_io_executor ex, const broker::TopicTable& topics, NodeId local_node);
  ReplicaManager(const ReplicaManager&) = delete;
  ReplicaManager& operator=(const ReplicaManager&) = delete;

  NodeId local_node() const { return local_node_; }

  // The hosted partition, or null (Kafka's getPartitionOrError answers
  // UNKNOWN_TOPIC_OR_PARTITION for it).
  std::shared_ptr<Partition> get_partition(const std::string& topic, PartitionId id) const;
  // Kafka's getPartitionOrError for a partition not hosted here: one the
  // metadata knows (a cluster's partition on other brokers) is
  // NOT_LEADER_OR_FOLLOWER, so the client refreshes its metadata and goes
  // to the leader; any other UNKNOWN_TOPIC_OR_PARTITION.
  ErrorCode missing_partition_error(const std::string& topic, PartitionId id) const;

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
  // `timeout`. The results are final when it returns.
  awaitable<void> append_records(int16_t required_acks, std::chrono::milliseconds timeout,
                                 std::span<AppendEntry> entries);

  // Kafka's fetchMessages: reads, and waits in the fetch purgatory while
  // waiting may improve the answer (after_read: replication::fetch_messages).
  awaitable<void> fetch_messages(std::span<FetchPartition> partitions, const FetchParams& params,
                                 std::function<void()> after_read = {}) {
    return replication::fetch_messages(fetch_purgatory_, partitions, params, std::move(after_read));
  }

  broker::DelayedOperations& fetch_purgatory() { return fetch_purgatory_; }
  broker::DelayedOperations& produce_purgatory() { return produce_purgatory_; }
  // Shutdown: waiting fetches answer with what they have.
  void expire_fetches() { fetch_purgatory_.expire_all(); }
  // Shutdown, once no request is served and before the logs close: each
  // partition's producer state goes into a snapshot at its log end.
  void snapshot_producers_before_close();

 private:
  const broker::TopicTable& topics_;
  NodeId local_node_;
  broker::DelayedOperations produce_purgatory_;
  broker::DelayedOperations fetch_purgatory_;
};

}  // namespace runnel::replication
