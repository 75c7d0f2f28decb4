// TopicTable: its records in the metadata store, the partition counts it
// keeps apart from what the replica manager hosts, and configs given to
// the hosted partitions' logs.
#include <catch2/catch.hpp>

#include "broker/testing/hosted_topics.h"
#include "storage/uuid_text.h"

using namespace runnel;
using namespace runnel::broker;
using namespace runnel::storage::testing;
using broker::testing::HostedTopics;

TEST_CASE("a topic's record in the metadata store reloads as the same topic", "[topic_table]") {
  TempDir dir;
  auto config = BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  std::string record;
  protocol::Uuid id;
  {
    HostedTopics node(config);
    auto created = node.create("orders", 2, {{"cleanup.policy", "compact"}});
    id = created->id;
    record = TopicTable::record(*created);
    REQUIRE(record == R"({"name":"orders","id":")" + storage::uuid_to_base64(id) +
                          R"(","partitions":2,"configs":{"cleanup.policy":"compact"}})");
  }
  HostedTopics reloaded(config);
  REQUIRE_FALSE(reloaded.topics.load({cluster::KeyValue{"topics/orders", record, 1, 1, cluster::kNoLease}}));
  auto topic = reloaded.topics.find("orders");
  REQUIRE(topic);
  REQUIRE(topic->id == id);
  REQUIRE(topic->partition_count == 2);
  REQUIRE(topic->overrides.at("cleanup.policy") == "compact");
  REQUIRE(reloaded.topics.find(id));
  // Loading is the metadata alone: opening the partitions is the broker's.
  REQUIRE(reloaded.replicas.partitions("orders").empty());
  REQUIRE(reloaded.topics.has_partition("orders", 1));
  REQUIRE_FALSE(reloaded.topics.has_partition("orders", 2));

  HostedTopics broken(config);
  REQUIRE(broken.topics.load({cluster::KeyValue{"topics/x", "{not json", 1, 1, cluster::kNoLease}}));
}

TEST_CASE("a mirrored topic knows every partition and the replica manager only the hosted ones", "[topic_table]") {
  TempDir dir;
  auto config = BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  HostedTopics node(config);
  cluster::TopicImage image;
  image.name = "spread";
  image.id = storage::random_uuid();
  image.partitions.resize(3);
  image.configs = {{"retention.ms", "1000"}};
  auto topic = node.topics.mirror(image);
  REQUIRE(topic->partition_count == 3);
  REQUIRE(topic->config.log.retention_ms == 1000);
  REQUIRE(node.topics.has_partition("spread", 2));
  REQUIRE_FALSE(node.replicas.get_partition("spread", PartitionId(2)));

  // Host partition 1 only, then a config change reaches its log.
  auto opened = open_partition(*node.logs, node.topics.partition_spec(*topic), 1);
  REQUIRE(opened);
  node.replicas.add_partition(*opened);
  REQUIRE(node.replicas.partitions("spread").size() == 1);
  image.configs = {{"retention.ms", "2000"}};
  image.partitions.resize(4);
  node.topics.mirror(image);
  REQUIRE(topic->partition_count == 4);
  REQUIRE(node.partition("spread", 1)->log().config().retention_ms == 2000);

  REQUIRE(node.replicas.remove_partition("spread", PartitionId(1)) == *opened);
  REQUIRE(node.replicas.partitions("spread").empty());
  REQUIRE_FALSE(node.replicas.remove_partition("spread", PartitionId(1)));
}

TEST_CASE("a grown topic gives its new partitions the config it has now", "[topic_table]") {
  TempDir dir;
  auto config = BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  HostedTopics node(config);
  auto topic = node.create("growing", 1);
  // Opened under the old config, as the front end's blocking work does
  // while a config change lands on the loop.
  auto spec = node.topics.partition_spec(*topic);
  node.topics.set_overrides(*topic, {{"segment.ms", "60000"}});
  auto added = create_partitions(*node.logs, spec, 1, 3);
  REQUIRE_FALSE(added.error);
  REQUIRE(added.partitions.at(0)->log().config().segment_ms != 60000);
  for (auto& p : added.partitions) node.replicas.add_partition(std::move(p));
  node.topics.grow(*topic, 3);
  REQUIRE(topic->partition_count == 3);
  for (const auto& p : node.replicas.partitions("growing")) REQUIRE(p->log().config().segment_ms == 60000);
}
