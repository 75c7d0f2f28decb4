// The topics this broker hosts: names, topic ids, partitions and config
// overrides, kept durable in <first log dir>/runnel-topics.json.
//
// Kafka keeps this in its KRaft metadata log (__cluster_metadata); a single
// Runnel node keeps it in one JSON file, rewritten atomically on every
// change. The partition directories themselves carry the topic id in
// partition.metadata as Kafka's do, and are checked against it at startup.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "broker/config.h"
#include "broker/partition.h"
#include "broker/topic_config.h"
#include "protocol/error_codes.h"
#include "storage/log_manager.h"

namespace runnel::broker {

template <typename T>
using Result = storage::Result<T>;

struct Topic {
  std::string name;
  protocol::Uuid id;
  TopicOverrides overrides;
  std::vector<std::shared_ptr<Partition>> partitions;
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
  TopicTable(const BrokerConfig& config, storage::LogManager& logs);

  // Loads runnel-topics.json and opens every partition's log.
  std::error_code load();

  std::shared_ptr<Topic> find(const std::string& name) const;
  std::shared_ptr<Topic> find(const protocol::Uuid& id) const;
  std::shared_ptr<Partition> partition(const std::string& topic, int32_t index) const;
  const std::map<std::string, std::shared_ptr<Topic>>& topics() const { return by_name_; }

  // Checks a CreateTopics entry the way Kafka's controller does; on success
  // fills in the defaulted partition count and replication factor.
  TopicError validate_new_topic(const std::string& name, int32_t& partitions, int16_t& replication_factor,
                                const TopicOverrides& overrides) const;
  // Creates a validated topic and its partition logs.
  Result<std::shared_ptr<Topic>> create(const std::string& name, int32_t partitions, const TopicOverrides& overrides,
                                        bool internal = false);
  TopicError remove(const std::string& name);
  // Grows a topic to `count` partitions (never shrinks).
  TopicError add_partitions(const std::string& name, int32_t count);
  // Replaces a topic's overrides (validated by the caller) and applies them.
  TopicError set_overrides(const std::string& name, TopicOverrides overrides);
  // After the broker's dynamic configs changed: every partition log gets
  // its topic's config recomputed over the new broker defaults.
  void apply_broker_defaults();

  // The storage config of a topic: its overrides over the broker's log.* values.
  storage::LogConfig log_config(const TopicOverrides& overrides) const { return log_config(config_, overrides); }
  static storage::LogConfig log_config(const BrokerConfig& config, const TopicOverrides& overrides);

  static TopicError validate_name(const std::string& name);
  static bool is_internal(const std::string& name);

 private:
  std::error_code save() const;
  Result<std::shared_ptr<Partition>> open_partition(const Topic& topic, int32_t index);

  const BrokerConfig& config_;
  storage::LogManager& logs_;
  std::map<std::string, std::shared_ptr<Topic>> by_name_;
  std::map<protocol::Uuid, std::shared_ptr<Topic>> by_id_;
};

}  // namespace runnel::broker
