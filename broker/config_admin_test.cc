#include <catch2/catch.hpp>

#include "broker/config_admin.h"

using namespace runnel::broker;
using runnel::protocol::ErrorCode;

TEST_CASE("broker ids parse as Java's Integer.parseInt", "[config_admin]") {
  REQUIRE(parse_java_int("1") == 1);
  REQUIRE(parse_java_int("+7") == 7);
  REQUIRE(parse_java_int("-0") == 0);
  REQUIRE(parse_java_int("007") == 7);
  REQUIRE(parse_java_int("-2147483648") == INT32_MIN);
  REQUIRE_FALSE(parse_java_int("2147483648"));
  REQUIRE_FALSE(parse_java_int(""));
  REQUIRE_FALSE(parse_java_int("-"));
  REQUIRE_FALSE(parse_java_int(" 1"));
  REQUIRE_FALSE(parse_java_int("1a"));
}

TEST_CASE("list values split as Java's String.split", "[config_admin]") {
  using V = std::vector<std::string>;
  REQUIRE(split_list("delete,compact") == V{"delete", "compact"});
  REQUIRE(split_list(",a,,b,,") == V{"", "a", "", "b"});
  REQUIRE(split_list("").empty());
  REQUIRE(split_list(",,").empty());
}

TEST_CASE("changes: no key twice, null only for an incremental delete", "[config_admin]") {
  std::vector<ConfigChange> dup = {{"a", 0, "1"}, {"a", 0, "2"}};
  REQUIRE(check_changes(dup, true).message == "Error due to duplicate config keys");
  std::vector<ConfigChange> nulls = {{"a", 0, std::nullopt}, {"b", 1, std::nullopt}, {"c", 0, std::nullopt}};
  REQUIRE(check_changes(nulls, true).message == "Null value not supported for : a, c");
  REQUIRE(check_changes(nulls, false).message == "Null value not supported for : a, b, c");
  REQUIRE(check_changes({{"b", 1, std::nullopt}}, true).ok());
}

TEST_CASE("broker configs cannot change at runtime", "[config_admin]") {
  auto e = alter_broker_configs("1", 1, {{"num.io.threads", 0, "4"}, {"log.retention.hours", 0, "1"}});
  REQUIRE(e.code == ErrorCode::invalid_request);
  REQUIRE(e.message == "Cannot update these configs dynamically: Set(num.io.threads, log.retention.hours)");
  REQUIRE(alter_broker_configs("", 1, {{"num.io.threads", 1, std::nullopt}}).ok());  // deleting nothing
  REQUIRE(alter_broker_configs("2", 1, {}).message == "Unexpected broker id, expected 1, but received 2");
  REQUIRE(alter_broker_configs("x", 1, {}).message == "Node id must be an integer, but it is: x");
  REQUIRE(alter_broker_configs("1", 1, {{"num.io.threads", 2, "4"}}).message ==
          "Config value append is not allowed for config key: num.io.threads");
  REQUIRE(alter_broker_configs("1", 1, {{"no.such.key", 3, "4"}}).code == ErrorCode::unknown_server_error);
  REQUIRE(alter_broker_configs("1", 1, {{"log.dirs", 2, "/x"}}).message ==
          "Cannot update these configs dynamically: Set(log.dirs)");
  REQUIRE(alter_broker_configs("1", 1, {{"a", 9, "4"}}).message == "Unknown operations type 9");
}
