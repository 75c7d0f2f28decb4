// Kafka 4.1.1's own DumpLogSegments --offsets-decoder reads a
// __consumer_offsets segment of the KIP-848 records the consumer group
// coordinator writes: two members join a group on a 3-partition topic, the
// first revokes what the second is given, the second leaves.
//
// Hidden ([.]): it needs Java and Kafka's jars, so ctest runs it through the
// [kafka-dump] entry of broker/CMakeLists.txt (label interop) with
// RUNNEL_KAFKA_CLASSPATH set to what storage/interop/kafka_jars.sh prints.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "broker/group/consumer/consumer_group_manager.h"
#include "broker/group/testing/coordinator_fakes.h"
#include "broker/testing/kafka_dump.h"

using namespace runnel::broker::group;
using namespace runnel::broker::group::consumer;
using namespace runnel::broker::group::testing;
using namespace runnel::broker::testing;
namespace fs = std::filesystem;

namespace {

struct OneTopic : TopicsImage {
  TopicImage orders{{}, 3};
  OneTopic() { orders.id.bytes[15] = 1; }  // "AAAAAAAAAAAAAAAAAAAAAQ" in Kafka's text
  std::optional<TopicImage> find(const std::string& name) const override {
    if (name == "orders") return orders;
    return std::nullopt;
  }
  std::optional<std::string> name_of(const TopicId& id) const override {
    if (id == orders.id) return "orders";
    return std::nullopt;
  }
  void for_each(const std::function<void(const std::string&, const TopicImage&)>& f) const override {
    f("orders", orders);
  }
};

ConsumerHeartbeat heartbeat(const std::string& member, int32_t epoch, std::optional<Assignment> owned) {
  ConsumerHeartbeat r;
  r.group_id = "dump-group";
  r.member_id = member;
  r.member_epoch = epoch;
  r.owned = std::move(owned);
  r.client_id = "client-" + member;
  r.client_host = "/127.0.0.1";
  if (epoch == 0) {
    r.rebalance_timeout_ms = 30000;
    r.subscribed_topic_names = std::vector<std::string>{"orders"};
  }
  return r;
}

}  // namespace

TEST_CASE("Kafka DumpLogSegments decodes the consumer group records Runnel writes", "[.][kafka-dump]") {
  const char* classpath = std::getenv("RUNNEL_KAFKA_CLASSPATH");
  REQUIRE(classpath);

  int64_t now = 1'700'000'000'000;
  FixtureClock clock{now};
  MemoryStore store;
  VirtualTimer timer;
  ConsumerGroupConfig config;
  OneTopic topics;
  ConsumerGroupManager mgr(config, store, clock, timer, topics, [](const std::string&) { return 0; },
                           [](const std::string&) { return false; });
  auto beat = [&](ConsumerHeartbeat r) {
    std::optional<ConsumerHeartbeatResult> out;
    mgr.heartbeat(std::move(r), [&](ConsumerHeartbeatResult res) { out = std::move(res); });
    REQUIRE(out);
    REQUIRE(out->error == ErrorCode::none);
    return *out;
  };
  beat(heartbeat("m1", 0, Assignment{}));
  beat(heartbeat("m2", 0, Assignment{}));
  auto asked = beat(heartbeat("m1", 1, Assignment{{topics.orders.id, {0, 1, 2}}}));
  beat(heartbeat("m1", 1, asked.assignment));
  beat(heartbeat("m2", -1, std::nullopt));

  const fs::path dir = fs::temp_directory_path() / ("runnel-cgdump-" + std::to_string(getpid())) / "__consumer_offsets-0";
  fs::remove_all(dir.parent_path());
  fs::create_directories(dir);
  std::vector<KeyValue> log;
  for (const auto& [partition, r] : store.records) log.push_back({r.key, r.value});
  write_log(dir, log, now);

  const std::string out = dump_log_segments(classpath, "--offsets-decoder", dir / "00000000000000000000.log");
  INFO(out);
  auto records = lines_with(out, "| offset: ");
  REQUIRE(records.size() == store.records.size());
  // The first member's join: subscription, group epoch, target, target
  // epoch, current assignment (Kafka's order), each decoded by its type.
  const std::pair<size_t, std::vector<const char*>> expected[] = {
      {0, {"\"type\":\"5\"", "\"memberId\":\"m1\"", "\"clientId\":\"client-m1\"", "\"clientHost\":\"/127.0.0.1\"",
           "\"subscribedTopicNames\":[\"orders\"]", "\"rebalanceTimeoutMs\":30000"}},
      {1, {"\"type\":\"3\"", "\"groupId\":\"dump-group\"", "\"epoch\":1"}},
      {2, {"\"type\":\"7\"", "\"memberId\":\"m1\"", "\"topicId\":\"AAAAAAAAAAAAAAAAAAAAAQ\"", "\"partitions\":[0,1,2]"}},
      {3, {"\"type\":\"6\"", "\"assignmentEpoch\":1"}},
      {4, {"\"type\":\"8\"", "\"memberEpoch\":1", "\"previousMemberEpoch\":0", "\"state\":0",
           "\"assignedPartitions\":[{\"topicId\":\"AAAAAAAAAAAAAAAAAAAAAQ\",\"partitions\":[0,1,2]}]"}},
  };
  for (const auto& [index, texts] : expected)
    for (const char* text : texts) {
      INFO("record " << index << " has " << text);
      CHECK(records[index].find(text) != std::string::npos);
    }
  // The revocation the first member was asked for, and the tombstones of
  // the second member's leave, then its group epoch.
  CHECK(lines_with(out, "\"state\":1").size() == 1);
  CHECK(lines_with(out, "\"partitionsPendingRevocation\":[{\"topicId\"").size() == 1);
  const size_t n = records.size();
  for (size_t i = n - 4; i < n - 1; ++i) CHECK(records[i].find("payload: <DELETE>") != std::string::npos);
  CHECK(records[n - 1].find("\"type\":\"3\"") != std::string::npos);
  fs::remove_all(dir.parent_path());
}
