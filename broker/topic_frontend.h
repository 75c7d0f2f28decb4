// The topic front end: the one write path handlers use for topics
// (CreateTopics, DeleteTopics, CreatePartitions, Metadata's auto-creation,
// topic config changes), as Redpanda's cluster::topics_frontend and
// Kafka's controller are. It validates, reserves the name, runs the disk
// work (partition directories, files, fsyncs) on the broker's blocking
// pool so other clients are served meanwhile, then publishes the result
// into the topic table and persists the topic's record in the metadata
// store. TopicTable stays the read side.
//
// Everything here runs on the event loop; only the disk work leaves it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>

#include "broker/asio.h"
#include "broker/topic_table.h"
#include "cluster/metadata_store.h"

namespace runnel::broker {

class Broker;

// Kafka's controller bounds one request (ReplicationControlManager and
// QuorumController, Kafka 4.x). Both fail the whole request with
// POLICY_VIOLATION, every topic in it, and nothing is created.
struct RequestBound {
  // MAX_PARTITIONS_PER_BATCH: the partitions one CreateTopics asks for,
  // counted before validation (-1 counts as num.partitions).
  static constexpr int64_t kMaxPartitions = 10'000;
  // MAX_RECORDS_PER_USER_OP: the metadata records one operation writes; a
  // new topic is one TopicRecord, one ConfigRecord per override and one
  // PartitionRecord per partition; a new partition one PartitionRecord.
  static constexpr int64_t kMaxRecords = 10'000;
  static TopicError too_many_partitions() {
    return {protocol::ErrorCode::policy_violation, "Excessively large number of partitions per request."};
  }
  static TopicError too_many_records() {
    return {protocol::ErrorCode::policy_violation, "Unable to perform excessively large batch operation."};
  }
  // The records creating this topic writes.
  static int64_t records_of_new_topic(int32_t partitions, size_t overrides) {
    return 1 + static_cast<int64_t>(overrides) + partitions;
  }
};

struct CreatedTopic {
  TopicError error;
  std::shared_ptr<Topic> topic;
};

// A new partition's replicas, preferred leader first, one list per
// partition; empty: placed by the seed's rule (cluster/replica_placement.h).
using ReplicaAssignment = std::vector<std::vector<NodeId>>;

// A manual replica list (CreateTopics' and CreatePartitions' assignments),
// checked as Kafka's controller does: not empty, every broker registered,
// none twice.
TopicError check_replica_list(const std::vector<int32_t>& replicas, const cluster::MetadataImage& image);

class TopicFrontend {
 public:
  explicit TopicFrontend(Broker& broker);

  // Checks a new topic the way Kafka's controller does (name, not already
  // there or being created, partitions, replication factor against the
  // live brokers, configs); on success fills in the defaulted partition
  // count and replication factor.
  TopicError validate_new_topic(const std::string& name, int32_t& partitions, int16_t& replication_factor,
                                const TopicOverrides& overrides) const;
  // Whether the name is being created or changed right now.
  bool in_flight(const std::string& name) const;

  // Creates a validated topic and its partitions. A failure on disk
  // removes whatever it made: the topic is then neither in the table nor
  // in the metadata store, and its partition directories are gone.
  // In a cluster it is one store transaction (cluster/topic_writes.h) with
  // every partition's replicas and leader; it returns once this broker's
  // image has the topic, and each replica's broker creates its log when
  // its own image does.
  awaitable<CreatedTopic> create(std::string name, int32_t partitions, TopicOverrides overrides,
                                 int16_t replication_factor = -1, ReplicaAssignment assignment = {});
  // Deletes a topic: gone from the table at once, its partition
  // directories renamed "-delete" off the loop.
  awaitable<TopicError> remove(std::string name);
  // Checks a CreatePartitions count against the topic's current one.
  static TopicError check_new_count(const Topic& topic, int32_t count);
  static TopicError check_new_count(int32_t current, const std::string& topic, int32_t count);
  // Grows a topic to `count` partitions, all or nothing.
  awaitable<TopicError> add_partitions(std::string name, int32_t count, ReplicaAssignment assignment = {});
  // Replaces a topic's overrides (validated by the caller), applies them
  // to its partition logs and persists them off the loop.
  awaitable<TopicError> set_overrides(std::string name, TopicOverrides overrides);

 private:
  TopicTable& table();
  // The cluster's side of each change: a store transaction, then the wait
  // (bounded by request.timeout.ms) until this broker's image reflects it.
  awaitable<CreatedTopic> create_in_cluster(std::string name, int32_t partitions, TopicOverrides overrides,
                                            int16_t replication_factor, ReplicaAssignment assignment);
  awaitable<TopicError> remove_in_cluster(std::string name);
  awaitable<TopicError> add_partitions_in_cluster(std::string name, int32_t count, ReplicaAssignment assignment);
  awaitable<TopicError> set_overrides_in_cluster(std::string name, TopicOverrides overrides);
  using TxnOrError = std::variant<cluster::Txn, TopicError>;
  awaitable<TopicError> commit_and_wait(std::function<TxnOrError(const cluster::MetadataImage&)> build);
  // Waits until no other change of this name is in flight.
  awaitable<void> wait_for(const std::string& name);
  // Stores a topic's record (topics/<name>), or deletes it, in the
  // metadata store; never blocks the loop.
  awaitable<std::error_code> persist(const Topic& topic);
  awaitable<std::error_code> unpersist(std::string name);
  awaitable<void> remove_logs(const std::string& topic, std::vector<int32_t> indexes);

  Broker& broker_;
  // Never expires: cancelled whenever a reservation ends, waking every
  // wait_for to look again.
  asio::steady_timer released_;
};

}  // namespace runnel::broker
