// Client quotas against a real in-process broker over loopback
// (broker/testing/broker_fixture.h): AlterClientQuotas (49) and
// DescribeClientQuotas (48) as Kafka answers them, the quotas surviving a
// restart, and the quotas held: a Produce or Fetch over its byte rate and
// a request over request_percentage answered with throttle_time_ms, the
// throttled connection read no further until the throttle has passed, a
// throttled fetch answered without partitions, and another client id on
// the same broker not throttled meanwhile.
#include <catch2/catch.hpp>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "broker/testing/broker_fixture.h"
#include "broker/testing/kafka_client.h"
#include "broker/testing/requests.h"
#include "protocol/error_codes.h"
#include "protocol/messages/18_api_versions.h"
#include "protocol/messages/48_describe_client_quotas.h"
#include "protocol/messages/49_alter_client_quotas.h"
#include "storage/io.h"
#include "storage/test_util.h"

using namespace runnel::broker;
using namespace runnel::broker::testing;
namespace p = runnel::protocol;

namespace {

using Name = std::optional<std::string>;
using Entity = std::vector<std::pair<std::string, Name>>;
using Op = p::AlterClientQuotasRequest::EntryData::OpData;
using Component = p::DescribeClientQuotasRequest::ComponentData;
constexpr int8_t kExact = 0, kDefault = 1, kSpecified = 2;

p::AlterClientQuotasRequest::EntryData entry(const Entity& entity, std::vector<Op> ops) {
  p::AlterClientQuotasRequest::EntryData e;
  for (const auto& [type, name] : entity) e.entity.push_back({type, name, {}});
  e.ops = std::move(ops);
  return e;
}

Op set_quota(const std::string& key, double value) { return {key, value, false, {}}; }
Op remove_quota(const std::string& key) { return {key, 0, true, {}}; }

p::AlterClientQuotasResponse alter(KafkaClient& client, std::vector<p::AlterClientQuotasRequest::EntryData> entries,
                                   bool validate_only = false, int16_t version = 1) {
  p::AlterClientQuotasRequest req;
  req.entries = std::move(entries);
  req.validate_only = validate_only;
  return client.call<p::AlterClientQuotasApi>(req, version);
}

void require_ok(const p::AlterClientQuotasResponse& resp) {
  for (const auto& e : resp.entries) {
    INFO(e.error_message.value_or(""));
    REQUIRE(e.error_code == 0);
  }
}

// entity -> key -> value, as DescribeClientQuotas answers a filter.
using Described = std::map<Entity, std::map<std::string, double>>;

Described describe(KafkaClient& client, std::vector<Component> components, bool strict = false) {
  p::DescribeClientQuotasRequest req;
  req.components = std::move(components);
  req.strict = strict;
  auto resp = client.call<p::DescribeClientQuotasApi>(req, 1);
  REQUIRE(resp.error_code == 0);
  REQUIRE(resp.entries.has_value());
  Described out;
  for (const auto& e : *resp.entries) {
    Entity entity;
    for (const auto& d : e.entity) entity.emplace_back(d.entity_type, d.entity_name);
    std::sort(entity.begin(), entity.end());
    for (const auto& v : e.values) out[entity][v.key] = v.value;
  }
  return out;
}

std::pair<int16_t, std::string> refusal(KafkaClient& client, p::AlterClientQuotasRequest::EntryData e) {
  auto resp = alter(client, {std::move(e)});
  REQUIRE(resp.entries.size() == 1);
  return {resp.entries[0].error_code, resp.entries[0].error_message.value_or("")};
}

std::vector<std::string> values_of(size_t n, size_t size) { return std::vector<std::string>(n, std::string(size, 'q')); }

int32_t api_versions_throttle(KafkaClient& client) {
  return client.call<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 3).throttle_time_ms;
}

}  // namespace

TEST_CASE("AlterClientQuotas sets and removes quotas that DescribeClientQuotas matches", "[quotas]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  const Name dflt;
  require_ok(alter(client, {entry({{"user", "alice"}}, {set_quota("producer_byte_rate", 1048576)}),
                            entry({{"user", "alice"}, {"client-id", "app"}}, {set_quota("consumer_byte_rate", 2048)}),
                            entry({{"user", dflt}}, {set_quota("request_percentage", 12.5)}),
                            entry({{"client-id", dflt}}, {set_quota("producer_byte_rate", 4096)}),
                            entry({{"ip", "127.0.0.1"}}, {set_quota("connection_creation_rate", 10)})}));
  // Every entity, for an empty filter that is not strict.
  auto all = describe(client, {});
  CHECK(all.size() == 5);
  CHECK(all[{{"user", "alice"}}] == std::map<std::string, double>{{"producer_byte_rate", 1048576}});
  // Exact name: every entity with user alice, or only {user=alice} when strict.
  CHECK(describe(client, {{"user", kExact, std::string("alice"), {}}}).size() == 2);
  auto strict = describe(client, {{"user", kExact, std::string("alice"), {}}}, true);
  REQUIRE(strict.size() == 1);
  CHECK(strict.begin()->first == Entity{{"user", "alice"}});
  // The default entity, and any entity of a type.
  auto defaults = describe(client, {{"user", kDefault, std::nullopt, {}}});
  REQUIRE(defaults.size() == 1);
  CHECK(defaults.begin()->second == std::map<std::string, double>{{"request_percentage", 12.5}});
  CHECK(describe(client, {{"client-id", kSpecified, std::nullopt, {}}}).size() == 2);
  CHECK(describe(client, {{"ip", kSpecified, std::nullopt, {}}}).size() == 1);
  CHECK(describe(client, {{"user", kExact, std::string("bob"), {}}}).empty());

  // ValidateOnly changes nothing; removing the last key removes the entity.
  require_ok(alter(client, {entry({{"user", "bob"}}, {set_quota("producer_byte_rate", 10)})}, true));
  CHECK(describe(client, {{"user", kExact, std::string("bob"), {}}}).empty());
  require_ok(alter(client, {entry({{"user", "alice"}}, {remove_quota("producer_byte_rate"), remove_quota("consumer_byte_rate")})}));
  CHECK(describe(client, {{"user", kExact, std::string("alice"), {}}}, true).empty());
  // v0, not flexible, answers the same.
  require_ok(alter(client, {entry({{"client-id", "v0"}}, {set_quota("consumer_byte_rate", 1)})}, false, 0));
  CHECK(describe(client, {{"client-id", kExact, std::string("v0"), {}}}).size() == 1);
}

TEST_CASE("AlterClientQuotas refuses what Kafka's controller refuses, entity by entity", "[quotas]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  const auto invalid = p::code(p::ErrorCode::invalid_request);
  using R = std::pair<int16_t, std::string>;
  CHECK(refusal(client, entry({{"user", "alice"}}, {set_quota("topic_byte_rate", 1)})) ==
        R{invalid, "Invalid configuration key topic_byte_rate"});
  CHECK(refusal(client, entry({{"user", "alice"}}, {set_quota("producer_byte_rate", 1.5)})) ==
        R{invalid, "producer_byte_rate cannot be a fractional value."});
  CHECK(refusal(client, entry({{"user", "alice"}}, {set_quota("request_percentage", 0)})) ==
        R{invalid, "Quota request_percentage must be greater than 0"});
  CHECK(refusal(client, entry({{"ip", "127.0.0.1"}}, {set_quota("connection_creation_rate", 3e9)})) ==
        R{invalid, "Proposed value for connection_creation_rate is too large for an INT."});
  CHECK(refusal(client, entry({{"ip", "127.0.0.1"}}, {set_quota("producer_byte_rate", 1)})) ==
        R{invalid, "Invalid configuration key producer_byte_rate"});
  CHECK(refusal(client, entry({{"user", "alice"}}, {set_quota("connection_creation_rate", 1)})) ==
        R{invalid, "Invalid configuration key connection_creation_rate"});
  CHECK(refusal(client, entry({{"ip", "127.0.0.1"}, {"user", "alice"}}, {set_quota("connection_creation_rate", 1)})) ==
        R{invalid, "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"});
  CHECK(refusal(client, entry({}, {set_quota("producer_byte_rate", 1)})) == R{invalid, "Invalid empty client quota entity"});
  CHECK(refusal(client, entry({{"topic", "t"}}, {set_quota("producer_byte_rate", 1)})) ==
        R{invalid, "Unhandled client quota entity type: topic"});
  CHECK(refusal(client, entry({{"user", ""}}, {set_quota("producer_byte_rate", 1)})) == R{invalid, "Empty user not supported"});
  CHECK(refusal(client, entry({{"ip", "no-such-host.invalid"}}, {set_quota("connection_creation_rate", 1)})) ==
        R{invalid, "no-such-host.invalid is not a valid IP or resolvable host."});
  CHECK(refusal(client, entry({{"user", "alice"}}, {set_quota("producer_byte_rate", 1), set_quota("producer_byte_rate", 2)})) ==
        R{invalid,
          "Duplicate quota key producer_byte_rate not updating quota for this entity "
          "ClientQuotaEntity(entries={user=alice})"});
  // An entity named twice: one entry in the response, nothing applied.
  auto twice = alter(client, {entry({{"user", "carol"}}, {set_quota("producer_byte_rate", 1)}),
                              entry({{"user", "carol"}}, {set_quota("consumer_byte_rate", 1)})});
  REQUIRE(twice.entries.size() == 1);
  CHECK(twice.entries[0].error_message == "Ignoring duplicate entity ClientQuotaEntity(entries={user=carol})");
  // A refused entity does not hold back a valid one beside it.
  auto mixed = alter(client, {entry({{"user", "dave"}}, {set_quota("producer_byte_rate", 1)}),
                              entry({{"user", "erin"}}, {set_quota("no_such_key", 1)})});
  REQUIRE(mixed.entries.size() == 2);
  CHECK(mixed.entries[0].error_code == 0);
  CHECK(mixed.entries[1].error_code == invalid);
  auto all = describe(client, {});
  CHECK(all.size() == 1);
  CHECK(all.count({{"user", "dave"}}) == 1);
}

TEST_CASE("client quotas survive a broker restart on the same log dir", "[quotas]") {
  runnel::storage::testing::TempDir dir;
  const std::map<std::string, std::string> props{{"log.dirs", dir.path.string()}};
  {
    BrokerFixture f(props);
    KafkaClient client(f.port());
    require_ok(alter(client, {entry({{"user", "alice"}, {"client-id", std::nullopt}}, {set_quota("consumer_byte_rate", 77)})}));
    auto text = runnel::storage::read_whole_file(dir.path / "runnel-client-quotas.json");
    REQUIRE(text);
    CHECK(text->find("consumer_byte_rate") != std::string::npos);
  }
  BrokerFixture f(props);
  KafkaClient client(f.port());
  auto all = describe(client, {});
  REQUIRE(all.size() == 1);
  CHECK(all.begin()->first == Entity{{"client-id", std::nullopt}, {"user", "alice"}});
  CHECK(all.begin()->second == std::map<std::string, double>{{"consumer_byte_rate", 77}});
}

TEST_CASE("a producer over producer_byte_rate is throttled and its connection muted; another client is not",
          "[quotas]") {
  BrokerFixture f;
  KafkaClient admin(f.port(), std::chrono::seconds(30), "admin");
  create_topic(admin, "quota-produce", 1);
  require_ok(alter(admin, {entry({{"client-id", "noisy"}}, {set_quota("producer_byte_rate", 10000)})}));

  KafkaClient noisy(f.port(), std::chrono::seconds(30), "noisy");
  KafkaClient quiet(f.port(), std::chrono::seconds(30), "quiet");
  // 120 kB against 10 kB/s measured over 10 s: 2 s over.
  const auto batch = batch_of(values_of(12, 10000));
  auto first = produce(noisy, "quota-produce", batch);
  REQUIRE(first.responses.size() == 1);
  CHECK(first.responses[0].partition_responses[0].error_code == 0);  // throttled, not refused: the records are in
  CHECK(first.throttle_time_ms > 1500);
  CHECK(first.throttle_time_ms < 3000);
  // The same connection is read again only once the throttle has passed.
  const auto sent = std::chrono::steady_clock::now();
  api_versions_throttle(noisy);
  const auto waited = std::chrono::steady_clock::now() - sent;
  CHECK(waited >= std::chrono::milliseconds(first.throttle_time_ms - 250));
  // Another client id has no quota: the same bytes go unthrottled.
  auto other = produce(quiet, "quota-produce", batch);
  CHECK(other.throttle_time_ms == 0);
  CHECK(other.responses[0].partition_responses[0].base_offset == 12);
}

TEST_CASE("a consumer over consumer_byte_rate gets an empty throttled fetch and the records later", "[quotas]") {
  BrokerFixture f;
  KafkaClient admin(f.port(), std::chrono::seconds(30), "admin");
  create_topic(admin, "quota-fetch", 1);
  for (int i = 0; i < 30; ++i) REQUIRE(produce(admin, "quota-fetch", batch_of(values_of(1, 5000))).throttle_time_ms == 0);
  require_ok(alter(admin, {entry({{"user", std::nullopt}, {"client-id", "reader"}}, {set_quota("consumer_byte_rate", 10000)})}));

  KafkaClient reader(f.port(), std::chrono::seconds(30), "reader");
  auto req = fetch_request("quota-fetch", 0, 0);
  req.topics[0].partitions[0].partition_max_bytes = 60000;
  auto first = reader.call<p::FetchApi>(req, kFetchVersion);
  CHECK(first.throttle_time_ms == 0);
  REQUIRE(first.responses.size() == 1);
  const auto& part = first.responses[0].partitions[0];
  CHECK(part.records.size() > 50000);
  // 60 kB more within the windows is 12 kB/s: over, so nothing is sent and
  // nothing counted; the consumer asks again for the same offset later.
  auto second = reader.call<p::FetchApi>(fetch_request("quota-fetch", 11, 0), kFetchVersion);
  CHECK(second.error_code == 0);
  CHECK(second.throttle_time_ms > 0);
  CHECK(second.responses.empty());
  // The admin's client id has no quota: it reads everything at once.
  auto all = admin.call<p::FetchApi>(fetch_request("quota-fetch", 0, 0), kFetchVersion);
  CHECK(all.throttle_time_ms == 0);
  REQUIRE(all.responses.size() == 1);
  CHECK(all.responses[0].partitions[0].records.size() > 140000);
}

TEST_CASE("a client over request_percentage is throttled on any API, at most one window", "[quotas]") {
  BrokerFixture f;
  KafkaClient admin(f.port(), std::chrono::seconds(30), "admin");
  // A millionth of a percent: the time any request takes is over it.
  require_ok(alter(admin, {entry({{"client-id", "busy"}}, {set_quota("request_percentage", 0.000001)})}));
  KafkaClient busy(f.port(), std::chrono::seconds(30), "busy");
  const int32_t throttle = api_versions_throttle(busy);
  CHECK(throttle > 0);
  CHECK(throttle <= 1000);  // quota.window.size.seconds
  CHECK(api_versions_throttle(admin) == 0);
  // Removed, the quota holds no more (once the muted connection is read again).
  require_ok(alter(admin, {entry({{"client-id", "busy"}}, {remove_quota("request_percentage")})}));
  CHECK(api_versions_throttle(busy) == 0);
}

TEST_CASE("DescribeClientQuotas matches no entity before any is set and refuses Kafka's invalid filters", "[quotas]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  using Component = p::DescribeClientQuotasRequest::ComponentData;
  auto ask = [&client](std::vector<Component> components, int16_t version) {
    p::DescribeClientQuotasRequest req;
    req.components = std::move(components);
    return client.call<p::DescribeClientQuotasApi>(req, version);
  };
  for (int16_t version : {int16_t{0}, int16_t{1}}) {
    auto ok = ask({{"user", 0, std::string("alice"), {}}}, version);
    CHECK(ok.error_code == 0);
    REQUIRE(ok.entries.has_value());
    CHECK(ok.entries->empty());
  }
  auto refused = [&](std::vector<Component> components, p::ErrorCode code, const std::string& message) {
    auto resp = ask(std::move(components), 1);
    CHECK(resp.error_code == p::code(code));
    CHECK(resp.error_message == message);
    CHECK_FALSE(resp.entries.has_value());
  };
  refused({{"user", 2, std::nullopt, {}}, {"user", 1, std::nullopt, {}}}, p::ErrorCode::invalid_request,
          "Entity type user cannot appear more than once in the filter.");
  refused({{"topic", 2, std::nullopt, {}}}, p::ErrorCode::unsupported_version, "Unsupported entity type topic");
  refused({{"user", 0, std::nullopt, {}}}, p::ErrorCode::invalid_request,
          "Request specified MATCH_TYPE_EXACT, but set match string to null.");
  refused({{"ip", 2, std::nullopt, {}}, {"user", 2, std::nullopt, {}}}, p::ErrorCode::invalid_request,
          "Invalid entity filter component combination. IP filter component should not be used with user or "
          "clientId filter component.");
}
