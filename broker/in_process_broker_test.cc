// A real broker in the test process (broker/testing/broker_fixture.h),
// driven over loopback by a synchronous client that speaks the generated
// codec: the request paths end to end, and the broker state behind them
// (the fetch purgatory) read on its event loop.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/api_registry.h"
#include "broker/authorization.h"
#include "broker/testing/broker_fixture.h"
#include "broker/testing/kafka_client.h"
#include "broker/testing/requests.h"
#include "protocol/error_codes.h"
#include "protocol/messages/00_produce.h"
#include "protocol/messages/01_fetch.h"
#include "protocol/messages/03_metadata.h"
#include "protocol/messages/18_api_versions.h"
#include "protocol/messages/19_create_topics.h"
#include "protocol/messages/75_describe_topic_partitions.h"
#include "protocol/records/batch_builder.h"

using namespace runnel::broker;
using namespace runnel::broker::testing;
namespace p = runnel::protocol;
namespace records = runnel::protocol::records;

namespace {

constexpr int16_t kMetadataVersion = 12;

// The broker stores a batch as it came except for baseOffset and
// partitionLeaderEpoch (a new partition's leader epoch is 0), which the CRC
// does not cover.
p::Bytes as_stored(p::Bytes batch, int64_t base_offset) {
  records::BatchHeader h = *records::read_batch_header(p::ByteView(batch.data(), batch.size()));
  h.base_offset = base_offset;
  h.partition_leader_epoch = 0;
  records::write_batch_header(h, batch.data());
  return batch;
}



const p::FetchResponse::FetchableTopicResponse::PartitionData& only_partition(const p::FetchResponse& resp) {
  REQUIRE(resp.error_code == p::code(p::ErrorCode::none));
  REQUIRE(resp.responses.size() == 1);
  REQUIRE(resp.responses[0].partitions.size() == 1);
  return resp.responses[0].partitions[0];
}

p::Bytes bytes_of(const p::Records& r) {
  REQUIRE_FALSE(r.is_file());
  return p::Bytes(r.bytes().begin(), r.bytes().end());
}

size_t fetches_waiting(BrokerFixture& broker) {
  return broker.on_loop([](Broker& b) { return b.replica_manager().fetch_purgatory().waiting(); });
}

// Polls `condition` until it holds; false after `bound` (a wait never hangs).
template <typename F>
bool eventually(F condition, std::chrono::milliseconds bound = std::chrono::seconds(20)) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace

TEST_CASE("ApiVersions is answered with the registry's ranges", "[in_process]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  p::ApiVersionsRequest req;
  req.client_software_name = "runnel-test";
  req.client_software_version = "1.0";
  auto resp = client.call<p::ApiVersionsApi>(req, 3);
  REQUIRE(resp.error_code == p::code(p::ErrorCode::none));
  auto routes = api_routes();
  REQUIRE(resp.api_keys.size() == routes.size());
  for (size_t i = 0; i < routes.size(); ++i) {
    CHECK(resp.api_keys[i].api_key == routes[i].key);
    CHECK(resp.api_keys[i].min_version == routes[i].min_version);
    CHECK(resp.api_keys[i].max_version == routes[i].max_version);
  }
}

TEST_CASE("a topic made by CreateTopics is listed by Metadata", "[in_process]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  create_topic(client, "orders", 3);
  p::MetadataRequest req;
  req.topics = std::vector<p::MetadataRequest::MetadataRequestTopic>{{{}, std::string("orders"), {}}};
  req.allow_auto_topic_creation = false;
  auto resp = client.call<p::MetadataApi>(req, kMetadataVersion);
  REQUIRE(resp.brokers.size() == 1);
  CHECK(resp.brokers[0].port == broker.port());
  REQUIRE(resp.topics.size() == 1);
  CHECK(resp.topics[0].name == "orders");
  CHECK(resp.topics[0].error_code == p::code(p::ErrorCode::none));
  REQUIRE(resp.topics[0].partitions.size() == 3);
  for (const auto& part : resp.topics[0].partitions) {
    CHECK(part.error_code == p::code(p::ErrorCode::none));
    CHECK(part.leader_id == 1);
  }
}

TEST_CASE("DescribeTopicPartitions pages the image's partitions with its cursor", "[in_process]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  create_topic(client, "pages-b", 2);
  create_topic(client, "pages-a", 3);
  using Request = p::DescribeTopicPartitionsRequest;
  auto describe = [&](std::vector<std::string> topics, int32_t limit, std::optional<p::DescribeTopicPartitionsCursor> cursor) {
    Request req;
    for (auto& t : topics) req.topics.push_back({t, {}});
    req.response_partition_limit = limit;
    req.cursor = std::move(cursor);
    return client.call<p::DescribeTopicPartitionsApi>(req, 0);
  };
  auto listed = [](const p::DescribeTopicPartitionsResponse& resp) {
    std::vector<std::pair<std::string, std::vector<int32_t>>> out;
    for (const auto& t : resp.topics) {
      out.emplace_back(t.name.value_or("(null)"), std::vector<int32_t>{});
      for (const auto& part : t.partitions) out.back().second.push_back(part.partition_index);
    }
    return out;
  };
  using Listed = std::vector<std::pair<std::string, std::vector<int32_t>>>;

  // Every topic, in name order, two partitions a page.
  auto first = describe({}, 2, std::nullopt);
  CHECK(listed(first) == Listed{{"pages-a", {0, 1}}});
  REQUIRE(first.next_cursor);
  CHECK(first.next_cursor->topic_name == "pages-a");
  CHECK(first.next_cursor->partition_index == 2);
  const auto& part = first.topics[0].partitions[0];
  CHECK(part.leader_id == 1);
  CHECK(part.replica_nodes == std::vector<int32_t>{1});
  CHECK(part.isr_nodes == std::vector<int32_t>{1});
  CHECK(part.eligible_leader_replicas == std::vector<int32_t>{});
  CHECK(part.last_known_elr == std::vector<int32_t>{});
  CHECK(first.topics[0].topic_authorized_operations == kAllTopicOperations);

  auto second = describe({}, 2, first.next_cursor);
  CHECK(listed(second) == Listed{{"pages-a", {2}}, {"pages-b", {0}}});
  REQUIRE(second.next_cursor);
  CHECK(second.next_cursor->topic_name == "pages-b");
  CHECK(second.next_cursor->partition_index == 1);

  auto last = describe({}, 2, second.next_cursor);
  CHECK(listed(last) == Listed{{"pages-b", {1}}});
  CHECK_FALSE(last.next_cursor);

  // Named topics: an unknown one is an error in its place; a cursor topic
  // outside the list makes every topic INVALID_REQUEST.
  auto named = describe({"pages-b", "nope"}, 2000, std::nullopt);
  REQUIRE(named.topics.size() == 2);
  CHECK(named.topics[0].name == "nope");
  CHECK(named.topics[0].error_code == p::code(p::ErrorCode::unknown_topic_or_partition));
  CHECK(named.topics[1].partitions.size() == 2);
  auto invalid = describe({"pages-b"}, 2000, p::DescribeTopicPartitionsCursor{"pages-a", 0, {}});
  REQUIRE(invalid.topics.size() == 1);
  CHECK(invalid.topics[0].error_code == p::code(p::ErrorCode::invalid_request));
  CHECK(invalid.topics[0].partitions.empty());
}

TEST_CASE("a produced batch is fetched back byte for byte", "[in_process]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  create_topic(client, "events", 1);
  auto batch = batch_of({"first", "second", "third"});
  for (int64_t base : {0, 3}) {
    auto resp = produce(client, "events", batch);
    REQUIRE(resp.responses.size() == 1);
    REQUIRE(resp.responses[0].partition_responses.size() == 1);
    CHECK(resp.responses[0].partition_responses[0].error_code == p::code(p::ErrorCode::none));
    CHECK(resp.responses[0].partition_responses[0].base_offset == base);
  }
  auto resp = client.call<p::FetchApi>(fetch_request("events", 3, 0), kFetchVersion);
  const auto& part = only_partition(resp);
  CHECK(part.error_code == p::code(p::ErrorCode::none));
  CHECK(part.high_watermark == 6);
  CHECK(bytes_of(part.records) == as_stored(batch, 3));
}

TEST_CASE("a long-poll Fetch is answered by the produce that arrives while it waits", "[in_process]") {
  BrokerFixture broker;
  KafkaClient consumer(broker.port());
  KafkaClient producer(broker.port());
  create_topic(producer, "waits", 1);
  // Longer than the client's own timeout: only the produce can answer it.
  int32_t id = consumer.send<p::FetchApi>(fetch_request("waits", 0, 120'000), kFetchVersion);
  REQUIRE(eventually([&] { return fetches_waiting(broker) == 1; }));
  auto batch = batch_of({"wake up"});
  auto produced = produce(producer, "waits", batch);
  REQUIRE(produced.responses[0].partition_responses[0].error_code == p::code(p::ErrorCode::none));
  auto resp = consumer.receive<p::FetchApi>(id, kFetchVersion);
  const auto& part = only_partition(resp);
  CHECK(part.error_code == p::code(p::ErrorCode::none));
  CHECK(part.high_watermark == 1);
  CHECK(bytes_of(part.records) == as_stored(batch, 0));
  CHECK(fetches_waiting(broker) == 0);
}

TEST_CASE("a long-poll Fetch that expires leaves no waiter", "[in_process]") {
  BrokerFixture broker;
  KafkaClient client(broker.port());
  create_topic(client, "quiet", 1);
  int32_t id = client.send<p::FetchApi>(fetch_request("quiet", 0, 2000), kFetchVersion);
  // It waits (nothing to read), then expires with an empty answer.
  REQUIRE(eventually([&] { return fetches_waiting(broker) == 1; }));
  auto resp = client.receive<p::FetchApi>(id, kFetchVersion);
  const auto& part = only_partition(resp);
  CHECK(part.error_code == p::code(p::ErrorCode::none));
  CHECK(part.high_watermark == 0);
  CHECK(part.records.size() == 0);
  CHECK(fetches_waiting(broker) == 0);
}
