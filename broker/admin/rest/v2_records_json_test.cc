#include "broker/admin/rest/v2_records_json.h"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

namespace runnel::broker::admin::rest {
namespace {

namespace json = boost::json;

using Parsed = std::variant<std::vector<RestRecord>, RestError>;

Parsed parse(std::string_view text, EmbeddedFormat f) { return parse_v2_records(json::parse(text), f); }

TEST_CASE("v2 binary records are base64 keys and values with an optional partition", "[rest]") {
  auto parsed = parse(R"({"records":[{"key":"a2V5","value":"dmFsdWU=","partition":1},{"value":"dg=="},{"key":null}]})",
                      EmbeddedFormat::binary);
  REQUIRE(std::holds_alternative<std::vector<RestRecord>>(parsed));
  const auto& rs = std::get<0>(parsed);
  REQUIRE(rs.size() == 3);
  CHECK(rs[0].key == "key");
  CHECK(rs[0].value == "value");
  CHECK(rs[0].partition == 1);
  CHECK_FALSE(rs[1].key);
  CHECK(rs[1].value == "v");
  CHECK_FALSE(rs[1].partition);
  CHECK_FALSE(rs[2].key);
  CHECK_FALSE(rs[2].value);
}

TEST_CASE("v2 json records are any JSON, stored as its compact text", "[rest]") {
  auto parsed = parse(R"({"records":[{"key":"k","value":{"foo": [1, 2.5, true]}},{"value":7}]})", EmbeddedFormat::json);
  REQUIRE(std::holds_alternative<std::vector<RestRecord>>(parsed));
  const auto& rs = std::get<0>(parsed);
  CHECK(rs[0].key == "\"k\"");
  CHECK(rs[0].value == R"({"foo":[1,2.5E0,true]})");
  CHECK(rs[1].value == "7");
}

TEST_CASE("v2 bodies that are no produce request are 422s", "[rest]") {
  const auto code = [](const Parsed& p) { return std::get<RestError>(p).error_code; };
  CHECK(code(parse(R"([])", EmbeddedFormat::binary)) == 422);
  CHECK(code(parse(R"({"value":"eA=="})", EmbeddedFormat::binary)) == 422);
  CHECK(code(parse(R"({"records":[]})", EmbeddedFormat::binary)) == 422);
  CHECK(code(parse(R"({"records":[5]})", EmbeddedFormat::json)) == 422);
  CHECK(code(parse(R"({"records":[{"value":"!!"}]})", EmbeddedFormat::binary)) == 422);
  CHECK(code(parse(R"({"records":[{"value":{"a":1}}]})", EmbeddedFormat::binary)) == 422);
  CHECK(code(parse(R"({"records":[{"value":"eA==","partition":-2}]})", EmbeddedFormat::binary)) == 422);
}

TEST_CASE("the v2 answer lists an offset per record, errors as 1 or 2", "[rest]") {
  RecordOutcome ok;
  ok.partition = 0;
  ok.offset = 5;
  RecordOutcome bad;
  bad.error_code = 50003;
  bad.message = "Kafka error: timed out";
  bad.retriable = true;
  CHECK(v2_produce_answer({ok, bad}) ==
        R"({"offsets":[{"partition":0,"offset":5,"error_code":null,"error":null},)"
        R"({"partition":null,"offset":null,"error_code":2,"error":"Kafka error: timed out"}],)"
        R"("key_schema_id":null,"value_schema_id":null})");
}

}  // namespace
}  // namespace runnel::broker::admin::rest
