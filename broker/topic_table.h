// The topics of the cluster as this broker knows them: names, topic ids,
// partition counts and config overrides, kept durable in the metadata
// store, one key per topic (topics/<name>; on one node
// <first log dir>/runnel-topics.json). What this broker hosts of them, the
// partitions with their logs, is the replica manager's
// (replication/replica_manager.h), not this table's.
//
// The read side: handlers look topics up here on the event loop (those
// that describe the cluster read the metadata image the broker publishes
// from this table, broker/metadata_publisher.h). Changes go through the
// topic front end (topic_frontend.h), which builds new partitions off the
// loop, hands them to the replica manager and publishes the topic here.
//
// Kafka keeps this in its KRaft metadata log (__cluster_metadata); Runnel
// in its metadata store (cluster/metadata_store.h). The partition
// directories themselves carry the topic id in partition.metadata as
// Kafka's do, and are checked against it at startup.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/config.h"
#include "broker/partition_opener.h"
#include "broker/topic_config.h"
#include "cluster/metadata_image.h"
#include "cluster/metadata_store.h"
#include "protocol/error_codes.h"
#include "replication/replica_manager.h"

namespace runnel::broker {

template <typename T>
using Result = storage::Result<T>;
using replication::Partition;

struct Topic {
  std::string name;
  protocol::Uuid id;
  TopicOverrides overrides;
  TopicConfig config;  // built from `overrides` over the broker's values (TopicConfig::build)
  int32_t partition_count = 0;
  bool internal = false;
};

// An error code with Kafka's message, for the handlers' responses.
struct TopicError {
  protocol::ErrorCode code = protocol::ErrorCode::none;
  std::string message;
  bool ok() const { return code == protocol::ErrorCode::none; }
};

class TopicTable {
 public:
  // `hosted`: where a topic's config goes when it changes (the logs of the
  // partitions this broker hosts of it).
  TopicTable(const BrokerConfig& config, replication::ReplicaManager& hosted);

  // Takes the stored topics (the topics/ keys). Opening their partitions
  // is the broker's (broker/partition_opener.h).
  std::error_code load(const std::vector<cluster::KeyValue>& topics);

  std::shared_ptr<Topic> find(const std::string& name) const;
  std::shared_ptr<Topic> find(const protocol::Uuid& id) const;
  const std::map<std::string, std::shared_ptr<Topic>>& topics() const { return by_name_; }
  // Whether the topic has this partition, hosted here or not.
  bool has_partition(const std::string& topic, int32_t index) const;

  // After the broker's dynamic configs changed: every topic's config is
  // rebuilt over the new broker defaults and given to its partition logs.
  void apply_broker_defaults();

  // The write side's primitives, for the topic front end (on the loop).
  // A reserved name is being created or changed on the blocking pool: it
  // cannot be created again meanwhile.
  bool reserved(const std::string& name) const { return reserved_.count(name) > 0; }
  void reserve(const std::string& name) { reserved_.insert(name); }
  void release(const std::string& name) { reserved_.erase(name); }
  // A new topic with a fresh topic id, not yet published.
  std::shared_ptr<Topic> new_topic(const std::string& name, const TopicOverrides& overrides, bool internal) const;
  // What opening the topic's partitions off the loop needs.
  PartitionSpec partition_spec(const Topic& topic) const;
  void publish(std::shared_ptr<Topic> topic);
  void unpublish(const Topic& topic);
  // A published topic grew to `count` partitions (their logs already opened
  // and hosted); they take the topic's config as it is now, which may have
  // changed while they were being made.
  void grow(Topic& topic, int32_t count);
  // Replaces a published topic's overrides and gives its partition logs the new config.
  void set_overrides(Topic& topic, TopicOverrides overrides);

  // In a cluster the table mirrors the metadata image (broker/hosted_partitions.h):
  // every topic of the cluster is here, hosted here or not. mirror() adds
  // the image's topic or brings its partition count and overrides up to
  // date; a topic of that name with another id must be unpublished first.
  std::shared_ptr<Topic> mirror(const cluster::TopicImage& image);

  // Runs after every change of a topic that readers can see (published,
  // unpublished, grown, overrides replaced), with the topic's name; the
  // broker publishes the metadata image from it. Not for load(): the
  // broker publishes every loaded topic at once.
  using Changed = std::function<void(const std::string& topic)>;
  void on_change(Changed changed) { changed_ = std::move(changed); }
  // A topic as stored under keys::topic(name): {"name","id","partitions","configs"}.
  static std::string record(const Topic& topic);

  // A topic's typed config: its overrides over the broker's values.
  TopicConfig topic_config(const TopicOverrides& overrides) const { return TopicConfig::build(config_, overrides); }

  static TopicError validate_name(const std::string& name);
  static bool is_internal(const std::string& name);

 private:
  const BrokerConfig& config_;
  replication::ReplicaManager& hosted_;
  std::map<std::string, std::shared_ptr<Topic>> by_name_;
  std::map<protocol::Uuid, std::shared_ptr<Topic>> by_id_;
  std::set<std::string> reserved_;
  Changed changed_;
};

}  // namespace runnel::broker
