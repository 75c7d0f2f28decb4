#include "broker/admin/rest/v3_records_json.h"

#include <boost/json/parse.hpp>
#include <catch2/catch.hpp>

namespace runnel::broker::admin::rest {
namespace {

namespace json = boost::json;

RestRecord record(std::string_view text) {
  auto parsed = parse_v3_record(json::parse(text));
  REQUIRE(std::holds_alternative<RestRecord>(parsed));
  return std::get<RestRecord>(parsed);
}

RestError error(std::string_view text) {
  auto parsed = parse_v3_record(json::parse(text));
  REQUIRE(std::holds_alternative<RestError>(parsed));
  return std::get<RestError>(parsed);
}

TEST_CASE("v3 records decode each data type to its bytes", "[rest]") {
  const RestRecord r = record(R"({"key":{"type":"BINARY","data":"a2V5"},"value":{"type":"JSON","data":{"a":[1,"x",null]}}})");
  CHECK(r.key == "key");
  CHECK(r.key_type == "BINARY");
  CHECK(r.value == R"({"a":[1,"x",null]})");
  CHECK(r.value_type == "JSON");
  CHECK_FALSE(r.partition);
  CHECK_FALSE(r.timestamp_ms);

  const RestRecord s = record(R"({"value":{"type":"STRING","data":"h\u00e9llo"}})");
  CHECK_FALSE(s.key);
  CHECK(s.key_type.empty());
  CHECK(s.value == "h\xc3\xa9llo");

  const RestRecord n = record(R"({"key":{"type":"JSON","data":null},"value":{"type":"BINARY"}})");
  CHECK_FALSE(n.key);
  CHECK(n.key_type == "JSON");
  CHECK_FALSE(n.value);
  CHECK(n.value_type == "BINARY");
}

TEST_CASE("v3 records carry partition, timestamp and base64 headers", "[rest]") {
  const RestRecord r = record(
      R"({"partition_id":2,"timestamp":"2021-02-05T19:14:42.821Z",)"
      R"("headers":[{"name":"h1","value":"djE="},{"name":"h1","value":null},{"name":"","value":""}],)"
      R"("value":{"type":"STRING","data":"v"}})");
  CHECK(r.partition == 2);
  CHECK(r.timestamp_ms == 1'612'552'482'821);
  REQUIRE(r.headers.size() == 3);
  CHECK(r.headers[0].name == "h1");
  CHECK(r.headers[0].value == "v1");
  CHECK_FALSE(r.headers[1].value);
  CHECK(r.headers[2].name.empty());
  CHECK(r.headers[2].value == "");
}

TEST_CASE("v3 records that REST Proxy refuses are 400s naming the field", "[rest]") {
  CHECK(error(R"([1,2])").error_code == 400);
  CHECK(error(R"({"value":{"type":"BINARY","data":"not base64!"}})").message.find("value.data") != std::string::npos);
  CHECK(error(R"({"value":{"type":"BINARY","data":7}})").error_code == 400);
  CHECK(error(R"({"value":{"type":"STRING","data":{"a":1}}})").error_code == 400);
  CHECK(error(R"({"value":{"data":"x"}})").message.find("type is required") != std::string::npos);
  CHECK(error(R"({"value":{"type":"AVRO","data":"x"}})").message.find("schema registry") != std::string::npos);
  CHECK(error(R"({"value":{"type":"XML","data":"x"}})").error_code == 400);
  CHECK(error(R"({"value":"x"})").error_code == 400);
  CHECK(error(R"({"partition_id":-1})").message.find("partition_id") != std::string::npos);
  CHECK(error(R"({"partition_id":"0"})").error_code == 400);
  CHECK(error(R"({"timestamp":"yesterday"})").message.find("timestamp") != std::string::npos);
  CHECK(error(R"({"timestamp":1612552482821})").error_code == 400);
  CHECK(error(R"({"headers":{"name":"h"}})").error_code == 400);
  CHECK(error(R"({"headers":[{"value":"djE="}]})").error_code == 400);
  CHECK(error(R"({"headers":[{"name":"h","value":"%%"}]})").message.find("header h") != std::string::npos);
}

TEST_CASE("a v3 delivery report is REST Proxy's, in its field order", "[rest]") {
  RestRecord r;
  r.key = "key";
  r.key_type = "BINARY";
  r.value = R"({"a":1})";
  r.value_type = "JSON";
  RecordOutcome o;
  o.partition = 1;
  o.offset = 42;
  o.timestamp_ms = 1'612'552'482'821;
  CHECK(v3_delivery_report("cid", "t", r, o) ==
        R"({"error_code":200,"cluster_id":"cid","topic_name":"t","partition_id":1,"offset":42,)"
        R"("timestamp":"2021-02-05T19:14:42.821Z","key":{"type":"BINARY","size":3},"value":{"type":"JSON","size":7}})");
  RestRecord no_key;
  no_key.value_type = "STRING";
  CHECK(v3_delivery_report("cid", "t", no_key, o).find("\"key\"") == std::string::npos);
  o.error_code = 50002;
  o.message = "Kafka error: boom";
  CHECK(v3_delivery_report("cid", "t", r, o) == R"({"error_code":50002,"message":"Kafka error: boom"})");
}

}  // namespace
}  // namespace runnel::broker::admin::rest
