// Topic configs: Kafka's names, types and defaults, each with the broker
// config(s) that supply its default (its synonyms, in Kafka's precedence).
// A topic's effective config is its own overrides over the broker's values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/config.h"

namespace runnel::broker {

// DescribeConfigsResponse ConfigSource values.
enum class ConfigSource : int8_t {
  unknown = 0,
  dynamic_topic_config = 1,
  dynamic_broker_config = 2,
  dynamic_default_broker_config = 3,
  static_broker_config = 4,
  default_config = 5,
  dynamic_broker_logger_config = 6,
};

// DescribeConfigsResponse ConfigType values.
enum class ConfigDataType : int8_t {
  unknown = 0, boolean = 1, string = 2, int_ = 3, short_ = 4, long_ = 5, double_ = 6, list = 7, class_ = 8, password = 9,
};

struct TopicConfigDef {
  ConfigDef def;                      // name, type, range; default used when no synonym applies
  std::vector<std::string> synonyms;  // broker keys, highest precedence first
};

struct ConfigEntry {
  std::string name;
  std::optional<std::string> value;
  ConfigSource source = ConfigSource::default_config;
  bool read_only = false;
  bool sensitive = false;
  ConfigDataType type = ConfigDataType::string;
  struct Synonym {
    std::string name;
    std::optional<std::string> value;
    ConfigSource source;
  };
  std::vector<Synonym> synonyms;  // this entry's own source first, as Kafka lists them
};

using TopicOverrides = std::map<std::string, std::string>;

const std::vector<TopicConfigDef>& topic_config_defs();
const TopicConfigDef* find_topic_config(const std::string& name);
ConfigDataType data_type(ConfigType t);

// Checks one override; returns Kafka's INVALID_CONFIG message, or "".
// A value the partition log would refuse (storage::LogConfig) is refused
// here too, so nothing is persisted that a restart could not open.
std::string validate_topic_config(const std::string& name, const std::optional<std::string>& value);
// Why storage::LogConfig refuses `value` for topic config `name`, or "".
std::string storage_refusal(const std::string& name, const std::string& value);
// The same for the broker-level default of a topic config (a synonym such
// as log.cleaner.min.cleanable.ratio), or "" when `broker_key` is none.
std::string check_topic_default(const std::string& broker_key, const std::string& value);

ConfigSource config_source(ConfigLayer layer);
// The values that broker keys `names` (a synonym family, highest precedence
// first) hold in each layer, as DescribeConfigs lists synonyms: by layer,
// then by name, Kafka's defaults last.
std::vector<ConfigEntry::Synonym> broker_synonyms(const BrokerConfig& broker, const std::vector<std::string>& names);

// The effective value and source of every topic config.
std::vector<ConfigEntry> describe_topic_configs(const BrokerConfig& broker, const TopicOverrides& overrides);
// The effective value of one topic config (always set: defaults fill in).
std::string topic_config_value(const BrokerConfig& broker, const TopicOverrides& overrides, const std::string& name);

}  // namespace runnel::broker
