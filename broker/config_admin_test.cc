#include <catch2/catch.hpp>

#include <algorithm>

#include "broker/config_admin.h"
#include "broker/topic_config.h"

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

namespace {
TopicError alter(const std::string& name, const std::vector<ConfigChange>& changes, const DynamicConfigs& current = {}) {
  DynamicConfigs out;
  return alter_broker_configs(name, 1, changes, current, out);
}
}  // namespace

TEST_CASE("static broker configs cannot change at runtime", "[config_admin]") {
  auto e = alter("1", {{"num.io.threads", 0, "4"}, {"log.retention.hours", 0, "1"}});
  REQUIRE(e.code == ErrorCode::invalid_request);
  REQUIRE(e.message == "Cannot update these configs dynamically: Set(log.retention.hours, num.io.threads)");
  REQUIRE(alter("", {{"num.io.threads", 1, std::nullopt}}).ok());  // deleting nothing
  REQUIRE(alter("2", {}).message == "Unexpected broker id, expected 1, but received 2");
  REQUIRE(alter("x", {}).message == "Node id must be an integer, but it is: x");
  REQUIRE(alter("1", {{"num.io.threads", 2, "4"}}).message ==
          "Config value append is not allowed for config key: num.io.threads");
  REQUIRE(alter("1", {{"no.such.key", 3, "4"}}).code == ErrorCode::unknown_server_error);
  REQUIRE(alter("1", {{"log.dirs", 2, "/x"}}).message == "Cannot update these configs dynamically: Set(log.dirs)");
  REQUIRE(alter("1", {{"a", 9, "4"}}).message == "Unknown operations type 9");
}

TEST_CASE("dynamic broker configs: the topic defaults, edited over the layer's current set", "[config_admin]") {
  REQUIRE(is_dynamic_broker_config("log.retention.ms"));
  REQUIRE(is_dynamic_broker_config("log.segment.bytes"));
  REQUIRE(is_dynamic_broker_config("message.max.bytes"));
  REQUIRE(is_dynamic_broker_config("log.cleanup.policy"));
  REQUIRE_FALSE(is_dynamic_broker_config("log.retention.hours"));  // a lower-precedence synonym
  REQUIRE_FALSE(is_dynamic_broker_config("log.dirs"));

  DynamicConfigs out;
  REQUIRE(alter_broker_configs("1", 1, {{"log.retention.ms", 0, "60000"}}, {{"log.segment.bytes", "1048576"}}, out).ok());
  REQUIRE(out == DynamicConfigs{{"log.retention.ms", "60000"}, {"log.segment.bytes", "1048576"}});
  REQUIRE(alter_broker_configs("", 1, {{"log.segment.bytes", 1, std::nullopt}}, out, out).ok());
  REQUIRE(out == DynamicConfigs{{"log.retention.ms", "60000"}});
  // APPEND starts from Kafka's default when the layer does not set the key.
  REQUIRE(alter_broker_configs("1", 1, {{"log.cleanup.policy", 2, "compact"}}, {}, out).ok());
  REQUIRE(out == DynamicConfigs{{"log.cleanup.policy", "delete,compact"}});
  REQUIRE(alter_broker_configs("1", 1, {{"log.cleanup.policy", 3, "delete"}}, out, out).ok());
  REQUIRE(out == DynamicConfigs{{"log.cleanup.policy", "compact"}});

  auto bad = alter("1", {{"log.retention.ms", 0, "soon"}});
  REQUIRE(bad.code == ErrorCode::invalid_config);
  REQUIRE(bad.message == "Invalid value soon for configuration log.retention.ms: Not a number of type LONG");
  REQUIRE(alter("1", {{"log.segment.bytes", 0, "1"}}).code == ErrorCode::invalid_config);  // below its minimum
}

TEST_CASE("dynamic layers take precedence over server.properties, per broker over cluster default", "[config_admin]") {
  auto config = BrokerConfig::from({{"node.id", "1"}, {"log.retention.ms", "1000"}});
  REQUIRE(config.get_long("log.retention.ms") == 1000);
  config.set_dynamic_configs(ConfigLayer::dynamic_default, {{"log.retention.ms", "2000"}});
  REQUIRE(config.get_long("log.retention.ms") == 2000);
  config.set_dynamic_configs(ConfigLayer::dynamic_broker, {{"log.retention.ms", "3000"}});
  REQUIRE(config.get_long("log.retention.ms") == 3000);
  REQUIRE(config.layer_value(ConfigLayer::static_broker, "log.retention.ms") == "1000");
  REQUIRE(config.layer_value(ConfigLayer::dynamic_default, "log.retention.ms") == "2000");
  REQUIRE(config.layer_value(ConfigLayer::default_value, "log.retention.hours") == "168");
  REQUIRE(topic_config_value(config, {}, "retention.ms") == "3000");
  auto entries = describe_topic_configs(config, {});
  auto it = std::find_if(entries.begin(), entries.end(), [](auto& e) { return e.name == "retention.ms"; });
  REQUIRE(it->value == "3000");
  REQUIRE(it->source == ConfigSource::dynamic_broker_config);
  REQUIRE(it->synonyms.size() == 4);  // dynamic broker, dynamic default, static, log.retention.hours' default
  REQUIRE(it->synonyms[1].source == ConfigSource::dynamic_default_broker_config);
  REQUIRE(it->synonyms[3].name == "log.retention.hours");
}

TEST_CASE("decimal configs are range-checked as decimals, with Kafka's Range messages", "[config_admin]") {
  // Truncated to integers, 1.5 and -0.5 used to pass [0, 1].
  REQUIRE(validate_topic_config("min.cleanable.dirty.ratio", "1.5") ==
          "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1");
  REQUIRE(validate_topic_config("min.cleanable.dirty.ratio", "-0.5") ==
          "Invalid value -0.5 for configuration min.cleanable.dirty.ratio: Value must be at least 0");
  REQUIRE(validate_topic_config("min.cleanable.dirty.ratio", "1.0000001") != "");
  for (const char* ok : {"0", "1", "0.0", "1.0", "0.5", "0.01"})
    REQUIRE(validate_topic_config("min.cleanable.dirty.ratio", std::string(ok)) == "");
  REQUIRE(validate_topic_config("min.cleanable.dirty.ratio", "half") ==
          "Invalid value half for configuration min.cleanable.dirty.ratio: Not a number of type DOUBLE");
  // Integers at their bounds.
  REQUIRE(validate_topic_config("segment.bytes", "14") == "");
  REQUIRE(validate_topic_config("segment.bytes", "13") ==
          "Invalid value 13 for configuration segment.bytes: Value must be at least 14");
  REQUIRE(validate_topic_config("compression.gzip.level", "9") == "");
  REQUIRE(validate_topic_config("compression.gzip.level", "10") ==
          "Invalid value 10 for configuration compression.gzip.level: Value must be no more than 9");
  REQUIRE(validate_topic_config("compression.zstd.level", "-131072") == "");
  REQUIRE(validate_topic_config("compression.zstd.level", "-131073") != "");
  REQUIRE(validate_topic_config("retention.ms", "-1") == "");
  REQUIRE(validate_topic_config("retention.ms", "-2") ==
          "Invalid value -2 for configuration retention.ms: Value must be at least -1");
  REQUIRE(validate_topic_config("retention.bytes", "-9223372036854775808") == "");
  REQUIRE(validate_topic_config("segment.bytes", "2147483648") ==
          "Invalid value 2147483648 for configuration segment.bytes: Not a number of type INT");

  // The broker-level default goes through the same check, dynamically...
  auto e = alter("1", {{"log.cleaner.min.cleanable.ratio", 0, "1.5"}});
  REQUIRE(e.code == ErrorCode::invalid_config);
  REQUIRE(e.message == "Invalid value 1.5 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1");
  REQUIRE(alter("", {{"log.cleaner.min.cleanable.ratio", 0, "-0.5"}}).code == ErrorCode::invalid_config);
  REQUIRE(alter("1", {{"log.cleaner.min.cleanable.ratio", 0, "0.9"}}).ok());
  // ... and in server.properties.
  REQUIRE_THROWS_WITH(BrokerConfig::from({{"node.id", "1"}, {"log.cleaner.min.cleanable.ratio", "1.5"}}),
                      "Invalid value 1.5 for configuration log.cleaner.min.cleanable.ratio: Value must be no more than 1");
}

TEST_CASE("what validation passes the partition log applies, with Kafka's trimming and case rules", "[config_admin]") {
  // A stored value the log refused made every later start fail ("rejected
  // by storage"). ConfigDef trims every value and reads a boolean in any
  // case, so these are Kafka-valid and must be applied, not refused.
  const auto broker = BrokerConfig::from({{"node.id", "1"}});
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{{"preallocate", "TRUE"},
                                                                             {"preallocate", " False "},
                                                                             {"message.timestamp.type", " CreateTime"},
                                                                             {"segment.ms", "5\t"},
                                                                             {"cleanup.policy", " compact ,\tdelete "}}) {
    INFO(name << "=" << value);
    REQUIRE(validate_topic_config(name, value) == "");
    REQUIRE_NOTHROW(TopicConfig::build(broker, {{name, value}}));
  }
  REQUIRE(TopicConfig::build(broker, {{"preallocate", "TRUE"}}).log.preallocate);
  REQUIRE_FALSE(TopicConfig::build(broker, {{"preallocate", " False "}}).log.preallocate);
  REQUIRE(TopicConfig::build(broker, {{"segment.ms", "5\t"}}).log.segment_ms == 5);
  auto both = TopicConfig::build(broker, {{"cleanup.policy", " compact ,\tdelete "}}).log;
  REQUIRE((both.cleanup_compact && both.cleanup_delete));
  REQUIRE(validate_topic_config("preallocate", "yes") != "");
  REQUIRE(alter("1", {{"log.preallocate", 0, "TRUE"}}).ok());

  // Every topic config the log has, over values around every bound.
  const std::vector<std::string> samples = {"", " ", "0", "1", "-1", "-2", "4", "13", "14", "0.5", "1.5", "-0.5",
                                            "2147483647", "2147483648", "9223372036854775807",
                                            "9223372036854775808", "true", "TRUE", "no", "delete", "compact",
                                            "compact,delete", "delete,,compact", "CreateTime", "LogAppendTime",
                                            "createtime", "1e3", "0x10"};
  for (const auto& key : topic_config_keys())
    for (const auto& value : samples) {
      INFO(key.name << "=" << value);
      if (validate_topic_config(key.name, value).empty())
        REQUIRE_NOTHROW(TopicConfig::build(broker, {{key.name, value}}));
      else
        REQUIRE_THROWS_AS(TopicConfig::build(broker, {{key.name, value}}), std::logic_error);
    }
}
