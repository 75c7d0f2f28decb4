// A single node's topic state without a running broker, for unit tests of
// the topic table and the replica manager: a log manager over a fresh dir,
// the metadata cache, the replica manager hosting the partitions and the
// topic table, wired as Broker wires them. create() makes a topic as the
// single node's topic front end does (open the logs, host them, publish),
// on the calling thread.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

#include "broker/asio.h"
#include "broker/partition_opener.h"
#include "broker/topic_table.h"
#include "cluster/metadata_cache.h"
#include "replication/replica_manager.h"
#include "storage/test_util.h"

namespace runnel::broker::testing {

struct HostedTopics {
  explicit HostedTopics(const BrokerConfig& broker_config, bool load_on_demand = false)
      : config(broker_config), logs(storage::testing::open_log_manager(dir_of(broker_config), load_on_demand)) {}

  std::shared_ptr<Topic> create(const std::string& name, int32_t partitions, const TopicOverrides& overrides = {}) {
    auto topic = topics.new_topic(name, overrides, false);
    auto opened = create_partitions(*logs, topics.partition_spec(*topic), 0, partitions);
    if (opened.error) throw std::runtime_error("creating " + name + ": " + opened.error.message());
    topic->partition_count = partitions;
    for (auto& p : opened.partitions) replicas.add_partition(std::move(p));
    topics.publish(topic);
    return topic;
  }

  // The stored topics, each partition opened and hosted, as Broker loads them.
  // Empty when every partition opened, else why not.
  std::string load(const std::vector<cluster::KeyValue>& stored) {
    if (auto ec = topics.load(stored)) return ec.message();
    return open_stored_partitions(*logs, topics, replicas);
  }

  std::shared_ptr<replication::Partition> partition(const std::string& topic, int32_t index) const {
    return replicas.get_partition(topic, PartitionId(index));
  }

  const BrokerConfig& config;
  std::unique_ptr<storage::LogManager> logs;
  asio::io_context io;
  cluster::MetadataCache metadata;
  replication::ReplicaManager replicas{io.get_executor(), metadata, NodeId(config.node_id())};
  TopicTable topics{config, replicas};

 private:
  static std::filesystem::path dir_of(const BrokerConfig& c) { return c.log_dirs().front(); }
};

}  // namespace runnel::broker::testing
