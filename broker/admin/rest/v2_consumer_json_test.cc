#include "broker/admin/rest/v2_consumer_json.h"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

using namespace runnel::broker::admin::rest;
namespace json = boost::json;

namespace {

template <typename T>
const T& ok(const std::variant<T, RestError>& v) {
  if (auto* e = std::get_if<RestError>(&v)) FAIL("unexpected error " << e->error_code << ": " << e->message);
  return std::get<T>(v);
}

template <typename T>
int error_code(const std::variant<T, RestError>& v) {
  auto* e = std::get_if<RestError>(&v);
  return e ? e->error_code : 0;
}

}  // namespace

TEST_CASE("a create body takes REST Proxy's fields as strings or JSON values") {
  auto r = ok(parse_create_consumer(json::parse(
      R"({"name":"c1","format":"JSON","auto.offset.reset":"earliest","auto.commit.enable":"false",)"
      R"("fetch.min.bytes":"10","consumer.request.timeout.ms":250})")));
  CHECK(r.name == "c1");
  CHECK(r.config.format == EmbeddedFormat::json);
  CHECK(r.config.auto_offset_reset == ConsumerInstanceConfig::Reset::earliest);
  CHECK_FALSE(r.config.auto_commit);
  CHECK(r.config.fetch_min_bytes == 10);
  CHECK(r.config.request_timeout == std::chrono::milliseconds(250));

  auto defaults = ok(parse_create_consumer(json::value(nullptr)));
  CHECK_FALSE(defaults.name);
  CHECK(defaults.config.format == EmbeddedFormat::binary);
  CHECK(defaults.config.auto_offset_reset == ConsumerInstanceConfig::Reset::latest);
  CHECK(defaults.config.auto_commit);  // enable.auto.commit's default
  CHECK(defaults.config.fetch_min_bytes == -1);

  auto underscored = ok(parse_create_consumer(json::parse(R"({"auto_offset_reset":"none"})")));
  CHECK(underscored.config.auto_offset_reset == ConsumerInstanceConfig::Reset::none);
}

TEST_CASE("a create body with a bad config gets REST Proxy's codes") {
  CHECK(error_code(parse_create_consumer(json::parse(R"({"auto.offset.reset":"bad-config"})"))) == 42204);
  CHECK(error_code(parse_create_consumer(json::parse(R"({"auto.commit.enable":"maybe"})"))) == 42204);
  CHECK(error_code(parse_create_consumer(json::parse(R"({"format":"xml"})"))) == 422);
  CHECK(error_code(parse_create_consumer(json::parse(R"({"format":"avro"})"))) == 422);
  CHECK(error_code(parse_create_consumer(json::parse(R"({"fetch.min.bytes":"20000000"})"))) == 40001);
  CHECK(error_code(parse_create_consumer(json::parse(R"([1])"))) == 422);
}

TEST_CASE("a subscription's topics win over a pattern beside them; neither changes nothing") {
  auto both = ok(parse_subscription(json::parse(R"({"topics":["a","b"],"topic_pattern":"x.*"})")));
  REQUIRE(both.topics);
  CHECK(*both.topics == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(both.topic_pattern);
  auto pattern = ok(parse_subscription(json::parse(R"({"topic_pattern":"x.*"})")));
  CHECK_FALSE(pattern.topics);
  CHECK(pattern.topic_pattern == "x.*");
  auto neither = ok(parse_subscription(json::parse(R"({})")));
  CHECK_FALSE(neither.topics);
  CHECK_FALSE(neither.topic_pattern);
  CHECK(error_code(parse_subscription(json::parse(R"({"topics":"a"})"))) == 422);
}

TEST_CASE("partitions, offsets and timestamps parse; malformed entries are 422") {
  auto parts = ok(parse_partitions(json::parse(R"({"partitions":[{"topic":"t","partition":1},{"topic":"u","partition":0}]})")));
  CHECK(parts == std::vector<TopicPartition>{{"t", 1}, {"u", 0}});
  CHECK(error_code(parse_partitions(json::parse(R"({"partitions":[{"topic":"t"}]})"))) == 422);

  auto offsets = ok(parse_offsets(json::parse(R"({"offsets":[{"topic":"t","partition":0,"offset":20,"metadata":"m"}]})")));
  CHECK(offsets.at({"t", 0}) == 20);
  CHECK(error_code(parse_offsets(json::parse(R"({"offsets":[{"topic":"t","partition":0,"offset":-1}]})"))) == 422);

  auto seek = ok(parse_seek(json::parse(
      R"({"offsets":[{"topic":"t","partition":0,"offset":3}],)"
      R"("timestamps":[{"topic":"t","partition":1,"timestamp":"2026-12-07T12:00:00Z"}]})")));
  CHECK(seek.offsets.at({"t", 0}) == 3);
  CHECK(seek.timestamps.at({"t", 1}) == 1796644800000);
  CHECK(error_code(parse_seek(json::parse(R"({"timestamps":[{"topic":"t","partition":1,"timestamp":"noon"}]})"))) == 422);
}

TEST_CASE("records answer in the instance's format, nulls kept") {
  ConsumedRestRecord a{"t", 0, 5, 0, std::nullopt, std::string("hi")};
  ConsumedRestRecord b{"t", 1, 7, 0, std::string("{\"k\":1}"), std::nullopt};
  auto binary = json::parse(ok(records_answer({a, b}, EmbeddedFormat::binary)));
  CHECK(binary.at(0).at("topic") == "t");
  CHECK(binary.at(0).at("key").is_null());
  CHECK(binary.at(0).at("value") == "aGk=");
  CHECK(binary.at(0).at("partition") == 0);
  CHECK(binary.at(0).at("offset") == 5);
  CHECK(binary.at(1).at("value").is_null());

  auto embedded = json::parse(ok(records_answer({b}, EmbeddedFormat::json)));
  CHECK(embedded.at(0).at("key").at("k") == 1);
  CHECK(error_code(records_answer({a}, EmbeddedFormat::json)) == 50002);  // "hi" is no JSON
}

TEST_CASE("committed answers list only partitions with a commit") {
  auto answer = json::parse(committed_answer({{"t", 0}, {"t", 1}}, {{{"t", 1}, {21, ""}}}));
  REQUIRE(answer.at("offsets").as_array().size() == 1);
  CHECK(answer.at("offsets").at(0).at("partition") == 1);
  CHECK(answer.at("offsets").at(0).at("offset") == 21);
  CHECK(answer.at("offsets").at(0).at("metadata") == "");
}
