// The metadata image a single node publishes (broker/metadata_publisher.h):
// it follows every topic change the topic front end and the group service
// make, carries this broker as registered and as the controller, and the
// replica manager applies what it says to the hosted partitions. A real
// broker in the test process, changed over the wire, its image read on
// its event loop.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "broker/testing/broker_fixture.h"
#include "broker/testing/kafka_client.h"
#include "broker/testing/requests.h"
#include "protocol/error_codes.h"
#include "protocol/messages/03_metadata.h"
#include "protocol/messages/10_find_coordinator.h"
#include "protocol/messages/20_delete_topics.h"
#include "protocol/messages/37_create_partitions.h"
#include "protocol/messages/44_incremental_alter_configs.h"
#include "protocol/messages/60_describe_cluster.h"

using namespace runnel;
using namespace runnel::broker;
using namespace runnel::broker::testing;
namespace p = runnel::protocol;

namespace {

const int16_t kNone = p::code(p::ErrorCode::none);
using Props = std::map<std::string, std::string>;

cluster::ImagePtr image_of(BrokerFixture& broker) {
  return broker.on_loop([](Broker& b) { return b.metadata_cache().image(); });
}

void delete_topic(KafkaClient& client, const std::string& name) {
  p::DeleteTopicsRequest req;
  req.topic_names = {name};
  req.timeout_ms = 30000;
  auto resp = client.call<p::DeleteTopicsApi>(req, 5);
  REQUIRE(resp.responses.size() == 1);
  REQUIRE(resp.responses[0].error_code == kNone);
}

void add_partitions(KafkaClient& client, const std::string& name, int32_t count) {
  p::CreatePartitionsRequest req;
  auto& t = req.topics.emplace_back();
  t.name = name;
  t.count = count;
  t.assignments = std::nullopt;
  req.timeout_ms = 30000;
  auto resp = client.call<p::CreatePartitionsApi>(req, 3);
  REQUIRE(resp.results.size() == 1);
  REQUIRE(resp.results[0].error_code == kNone);
}

void set_topic_config(KafkaClient& client, const std::string& topic, const std::string& key, const std::string& value) {
  p::IncrementalAlterConfigsRequest req;
  auto& r = req.resources.emplace_back();
  r.resource_type = 2;  // TOPIC
  r.resource_name = topic;
  auto& c = r.configs.emplace_back();
  c.name = key;
  c.config_operation = 0;  // SET
  c.value = value;
  auto resp = client.call<p::IncrementalAlterConfigsApi>(req, 1);
  REQUIRE(resp.responses.size() == 1);
  REQUIRE(resp.responses[0].error_code == kNone);
}

// Each partition as the single node leads it: replica, ISR and leader this
// node, in epoch 0.
void check_led_here(const cluster::TopicImage& t, size_t partitions) {
  REQUIRE(t.partitions.size() == partitions);
  for (const auto& r : t.partitions) {
    CHECK(r.leader == NodeId(1));
    CHECK(r.leader_epoch == LeaderEpoch(0));
    CHECK(r.replicas == std::vector<NodeId>{NodeId(1)});
    CHECK(r.isr == std::vector<NodeId>{NodeId(1)});
  }
}

}  // namespace

TEST_CASE("the image carries this broker, as registered and as the controller", "[metadata_publisher]") {
  BrokerFixture broker(Props{{"broker.rack", "rack-a"}});
  auto image = image_of(broker);
  const std::string cluster_id = broker.on_loop([](Broker& b) { return b.cluster_id(); });
  CHECK(image->cluster_id() == cluster_id);
  CHECK(image->controller() == NodeId(1));
  REQUIRE(image->brokers().size() == 1);
  const cluster::BrokerRegistration* self = image->broker(NodeId(1));
  REQUIRE(self);
  CHECK_FALSE(self->fenced);
  CHECK(self->rack == "rack-a");
  // The bound port, not the configured 0.
  REQUIRE(self->endpoints.size() == 1);
  CHECK(self->endpoints[0] == cluster::BrokerEndpoint{"PLAINTEXT", "PLAINTEXT", "127.0.0.1", broker.port()});

  KafkaClient client(broker.port());
  p::DescribeClusterRequest req;
  auto resp = client.call<p::DescribeClusterApi>(req, 2);
  CHECK(resp.cluster_id == cluster_id);
  CHECK(resp.controller_id == 1);
  REQUIRE(resp.brokers.size() == 1);
  CHECK(resp.brokers[0].broker_id == 1);
  CHECK(resp.brokers[0].host == "127.0.0.1");
  CHECK(resp.brokers[0].port == broker.port());
  CHECK(resp.brokers[0].rack == "rack-a");
  CHECK_FALSE(resp.brokers[0].is_fenced);
}

TEST_CASE("the image follows topic creation, growth, config changes and deletion", "[metadata_publisher]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  const int64_t start = image_of(broker)->revision();

  create_topic(client, "orders", 2, {{"retention.ms", "60000"}});
  auto created = image_of(broker);
  CHECK(created->revision() > start);
  auto orders = created->topic("orders");
  REQUIRE(orders);
  CHECK_FALSE(orders->internal);
  CHECK(orders->configs == cluster::TopicConfigs{{"retention.ms", "60000"}});
  check_led_here(*orders, 2);
  const p::Uuid id = broker.on_loop([](Broker& b) { return b.topics().find("orders")->id; });
  CHECK(orders->id == id);
  CHECK(created->topic(id) == orders);

  create_topic(client, "audit", 1);
  auto two = image_of(broker);
  CHECK(two->revision() > created->revision());
  CHECK(two->topic("orders") == orders);  // untouched, so shared

  add_partitions(client, "orders", 5);
  auto grown = image_of(broker);
  CHECK(grown->revision() > two->revision());
  REQUIRE(grown->topic("orders"));
  CHECK(grown->topic("orders")->id == id);
  check_led_here(*grown->topic("orders"), 5);

  set_topic_config(client, "orders", "cleanup.policy", "compact");
  auto altered = image_of(broker);
  CHECK(altered->revision() > grown->revision());
  REQUIRE(altered->topic("orders"));
  CHECK(altered->topic("orders")->configs ==
        cluster::TopicConfigs{{"cleanup.policy", "compact"}, {"retention.ms", "60000"}});
  check_led_here(*altered->topic("orders"), 5);

  delete_topic(client, "orders");
  auto deleted = image_of(broker);
  CHECK(deleted->revision() > altered->revision());
  CHECK_FALSE(deleted->topic("orders"));
  CHECK_FALSE(deleted->topic(id));
  CHECK(deleted->topic("audit"));
}

TEST_CASE("the image has __consumer_offsets once the group service creates it", "[metadata_publisher]") {
  BrokerFixture broker(Props{{"offsets.topic.num.partitions", "3"}});
  CHECK_FALSE(image_of(broker)->topic("__consumer_offsets"));
  KafkaClient client(broker.port());
  p::FindCoordinatorRequest req;
  req.key = "g";
  auto resp = client.call<p::FindCoordinatorApi>(req, 3);
  REQUIRE(resp.error_code == kNone);
  CHECK(resp.node_id == 1);
  CHECK(resp.port == broker.port());
  auto offsets = image_of(broker)->topic("__consumer_offsets");
  REQUIRE(offsets);
  CHECK(offsets->internal);
  CHECK(offsets->configs.at("cleanup.policy") == "compact");
  check_led_here(*offsets, 3);
}

TEST_CASE("a restarted broker publishes the topics it loads", "[metadata_publisher]") {
  storage::testing::TempDir dir;
  p::Uuid id;
  {
    BrokerFixture broker(Props{{"log.dirs", dir.path.string()}});
    KafkaClient client(broker.port());
    create_topic(client, "kept", 3, {{"retention.ms", "60000"}});
    id = image_of(broker)->topic("kept")->id;
  }
  BrokerFixture again(Props{{"log.dirs", dir.path.string()}});
  auto kept = image_of(again)->topic("kept");
  REQUIRE(kept);
  CHECK(kept->id == id);
  CHECK(kept->configs == cluster::TopicConfigs{{"retention.ms", "60000"}});
  check_led_here(*kept, 3);
}

TEST_CASE("Metadata answers what the image says", "[metadata_publisher]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  create_topic(client, "orders", 3);
  auto image = image_of(broker);
  p::MetadataRequest req;
  req.topics = std::nullopt;  // every topic
  auto resp = client.call<p::MetadataApi>(req, 12);
  CHECK(resp.cluster_id == image->cluster_id());
  CHECK(resp.controller_id == 1);
  REQUIRE(resp.brokers.size() == 1);
  CHECK(resp.brokers[0].node_id == 1);
  CHECK(resp.brokers[0].port == broker.port());
  REQUIRE(resp.topics.size() == 1);
  const auto& t = resp.topics[0];
  CHECK(t.name == "orders");
  CHECK(t.topic_id == image->topic("orders")->id);
  CHECK_FALSE(t.is_internal);
  REQUIRE(t.partitions.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(t.partitions[i].error_code == kNone);
    CHECK(t.partitions[i].partition_index == static_cast<int32_t>(i));
    CHECK(t.partitions[i].leader_id == 1);
    CHECK(t.partitions[i].leader_epoch == 0);
    CHECK(t.partitions[i].replica_nodes == std::vector<int32_t>{1});
    CHECK(t.partitions[i].isr_nodes == std::vector<int32_t>{1});
    CHECK(t.partitions[i].offline_replicas.empty());
  }

  // Auto-created: answered from the image the creation published.
  p::MetadataRequest named;
  named.topics = std::vector<p::MetadataRequest::MetadataRequestTopic>{{{}, std::string("fresh"), {}}};
  named.allow_auto_topic_creation = true;
  auto created = client.call<p::MetadataApi>(named, 12);
  REQUIRE(created.topics.size() == 1);
  CHECK(created.topics[0].error_code == kNone);
  auto fresh = image_of(broker)->topic("fresh");
  REQUIRE(fresh);
  CHECK(created.topics[0].topic_id == fresh->id);
  CHECK(created.topics[0].partitions.size() == fresh->partitions.size());
}

TEST_CASE("the replica manager applies a delta's leaders to the hosted partitions", "[metadata_publisher]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  create_topic(client, "orders", 2);
  // A later leader epoch for partition 1, as a controller would write it.
  auto epochs = broker.on_loop([](Broker& b) {
    const cluster::ImagePtr before = b.metadata_cache().image();
    cluster::PartitionRegistration r = *before->partition("orders", PartitionId(1));
    r.leader_epoch = LeaderEpoch(4);
    auto after = std::make_shared<const cluster::MetadataImage>(before->with_partition("orders", PartitionId(1), r));
    b.replica_manager().apply_delta(cluster::MetadataDelta(before, after));
    auto& rm = b.replica_manager();
    return std::pair(rm.get_partition("orders", PartitionId(0))->leader_epoch(),
                     rm.get_partition("orders", PartitionId(1))->leader_epoch());
  });
  CHECK(epochs.first == LeaderEpoch(0));   // unchanged: not in the delta
  CHECK(epochs.second == LeaderEpoch(4));
}
