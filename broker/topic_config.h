// Topic configs: a topic's effective config is its own overrides over the
// broker's values of the topic config's synonyms (config_def.h), over
// Kafka's defaults. The typed TopicConfig is built from them once per
// change, so nothing on the produce path looks a config up by name.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/config.h"
#include "storage/log_config.h"

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

struct ConfigEntry {
  std::string name;
  std::optional<std::string> value;
  ConfigSource source = ConfigSource::default_config;
  bool read_only = false;
  bool sensitive = false;
  ConfigDataType type = ConfigDataType::string;
  std::optional<std::string> documentation;  // the key's, from the table
  struct Synonym {
    std::string name;
    std::optional<std::string> value;
    ConfigSource source;
  };
  std::vector<Synonym> synonyms;  // this entry's own source first, as Kafka lists them
};

using TopicOverrides = std::map<std::string, std::string>;

ConfigDataType data_type(ConfigType t);

// Checks one override against the topic key's definition; returns Kafka's
// INVALID_CONFIG message, or "". Whatever passes, TopicConfig::build applies.
std::string validate_topic_config(const std::string& name, const std::optional<std::string>& value);

ConfigSource config_source(ConfigLayer layer);
// The values that broker keys `names` (a synonym family, highest precedence
// first) hold in each layer, as DescribeConfigs lists synonyms: by layer,
// then by name, Kafka's defaults last.
std::vector<ConfigEntry::Synonym> broker_synonyms(const BrokerConfig& broker, const std::vector<std::string>& names);

// The effective value and source of every topic config.
std::vector<ConfigEntry> describe_topic_configs(const BrokerConfig& broker, const TopicOverrides& overrides);
// The effective value of one topic config (always set: defaults fill in).
std::string topic_config_value(const BrokerConfig& broker, const TopicOverrides& overrides, const std::string& name);

// A topic's effective config, typed: what storage applies (storage::LogConfig)
// and what the broker reads per produced batch. Rebuilt whenever the topic's
// overrides or the broker's dynamic defaults change.
struct TopicConfig {
  storage::LogConfig log;
  int32_t max_message_bytes = 0;                    // max.message.bytes
  int32_t min_insync_replicas = 0;                  // min.insync.replicas
  int64_t message_timestamp_before_max_ms = 0;      // message.timestamp.before.max.ms
  int64_t message_timestamp_after_max_ms = 0;       // message.timestamp.after.max.ms
  std::string compression_type;                     // compression.type, trimmed
  int32_t compression_gzip_level = 0;               // compression.gzip.level
  int32_t compression_lz4_level = 0;                // compression.lz4.level
  int32_t compression_zstd_level = 0;               // compression.zstd.level
  bool unclean_leader_election_enable = false;      // unclean.leader.election.enable

  // Throws std::logic_error for a value the table refuses (a stored
  // override is validated before it is stored).
  static TopicConfig build(const BrokerConfig& broker, const TopicOverrides& overrides);
  bool operator==(const TopicConfig&) const = default;
};

}  // namespace runnel::broker
