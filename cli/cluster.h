// The client's view of a cluster: bootstrap through any listed broker,
// Metadata for brokers, topics and leaders, and one connection per broker
// node, opened on first use. Requests that must reach a partition's leader
// or a group's coordinator find it here; with_retries() repeats a step on
// retriable errors and lost connections, refreshing what it knows between
// attempts, a bounded number of times (-X retries, retry.backoff.ms).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/broker_connection.h"
#include "cli/client_config.h"
#include "protocol/codec/types.h"

namespace runnel::cli {

struct PartitionInfo {
  int32_t partition = 0;
  int16_t error_code = 0;
  int32_t leader = -1;
  int32_t leader_epoch = -1;
  std::vector<int32_t> replicas;
  std::vector<int32_t> isr;
  std::vector<int32_t> offline;
};

struct TopicInfo {
  std::string name;
  protocol::Uuid id;
  bool internal = false;
  int16_t error_code = 0;
  std::vector<PartitionInfo> partitions;  // by index
};

struct BrokerInfo {
  int32_t node_id = -1;
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
};

struct ClusterMetadata {
  std::optional<std::string> cluster_id;
  int32_t controller_id = -1;
  std::vector<BrokerInfo> brokers;  // by node id
  std::map<std::string, TopicInfo> topics;
};

class Cluster {
 public:
  explicit Cluster(ClientConfig config);

  const ClientConfig& config() const { return config_; }

  // Metadata for `topics` (nullopt: every topic). Never creates topics.
  ClusterMetadata metadata(const std::optional<std::vector<std::string>>& topics);
  // One topic's metadata; KafkaError with the topic's error when it has one.
  TopicInfo topic(const std::string& name);

  // A connection to some broker (the bootstrap one while it lasts).
  BrokerConnection& any();
  BrokerConnection& broker(int32_t node_id);
  // Where admin requests go: the controller Metadata names, else any broker.
  BrokerConnection& controller();
  // The group coordinator of `group_id` (FindCoordinator, key type 0).
  BrokerConnection& coordinator(const std::string& group_id);
  // The leader of topic/partition as Metadata last said (refreshed if unknown).
  BrokerConnection& leader(const std::string& topic, int32_t partition);

  // Drops the connection to `node_id` (or the bootstrap one) and what is
  // known of leaders and coordinators, so the next call asks again.
  void forget_all();

  // Runs `step` until it succeeds; retriable KafkaErrors and ConnectErrors
  // are retried with a backoff after forget_all(). `what` names the step in
  // the last error.
  template <typename F>
  auto with_retries(F&& step) -> decltype(step()) {
    for (int attempt = 0;; ++attempt) {
      try {
        return step();
      } catch (const KafkaError& e) {
        if (!is_retriable(e.code()) || attempt >= config_.retries()) throw;
      } catch (const ConnectError&) {
        // A broker that is not there rarely comes back within seconds.
        if (attempt >= std::min(config_.retries(), 3)) throw;
      }
      forget_all();
      backoff(attempt);
    }
  }

  const ClusterMetadata& known() const { return known_; }
  // retry.backoff.ms doubled per attempt, at most a second.
  void backoff(int attempt) const;

 private:
  BrokerConnection& connect_bootstrap();

  ClientConfig config_;
  std::unique_ptr<BrokerConnection> bootstrap_;
  std::map<int32_t, std::unique_ptr<BrokerConnection>> brokers_;
  std::map<std::string, int32_t> coordinators_;
  ClusterMetadata known_;
  bool have_metadata_ = false;
};

}  // namespace runnel::cli
