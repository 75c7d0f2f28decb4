// The one definition of every config Runnel knows, as Kafka's ConfigDef:
// each key's name, type, default, validator, importance, documentation and
// dynamic-update mode, for the broker's keys (KafkaConfig) and the topic
// keys (LogConfig), plus Kafka's topic -> broker synonym table
// (ServerTopicConfigSynonyms). server.properties, topic overrides, dynamic
// broker configs and DescribeConfigs all read these tables; nothing else
// lists config names.
//
// It lives in broker/: storage only sees the typed storage::LogConfig the
// broker builds from it (topic_config.h), so storage keeps no names and
// does not depend on the broker.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace runnel::broker {

// Kafka's ConfigDef.Type.
enum class ConfigType { boolean, string, int_, short_, long_, double_, list, class_, password };

// Kafka's ConfigDef.Importance (documentation only; no client sees it).
enum class Importance { high, medium, low };

// Kafka's dynamic update mode of a broker key (DynamicBrokerConfig): whether
// AlterConfigs on a BROKER resource may change it at runtime. Runnel applies
// the broker defaults of topic configs at runtime, each on BROKER
// "<node id>" or BROKER "" (Kafka's cluster-wide mode), and a listener's key
// store and trust store (per_listener: only as listener.name.<l>.<key> on
// BROKER "<node id>", Kafka's per-broker security configs).
enum class DynamicUpdate { read_only, cluster_wide, per_listener };

// Kafka's ConfigDef.Validator. Range bounds are compared in the value's own
// type (a double as a double); INT64_MIN / INT64_MAX mean no bound.
struct Validator {
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  std::vector<std::string> valid_values = {};  // ValidString / ValidList when not empty
  // A custom check: Kafka's message after "Invalid value V for configuration K: ", or "".
  std::string (*custom)(std::string_view name, std::string_view value) = nullptr;
};

struct ConfigKey {
  const char* name;
  ConfigType type;
  const char* default_value;  // nullptr: Kafka's null
  Validator validator = {};
  Importance importance = Importance::medium;
  const char* documentation = nullptr;  // not sent yet: DescribeConfigs answers null, as before
  DynamicUpdate update = DynamicUpdate::read_only;
  // A Kafka key Runnel accepts, so Kafka's own server.properties starts,
  // but does not act on: why, reported at startup when it is set (DESIGN).
  const char* not_acted_on = nullptr;
  // not_acted_on holds on a single node only: a cluster
  // (runnel.etcd.endpoints set) acts on the key, and it is not reported.
  bool acted_on_in_cluster = false;
};

// A broker key that supplies a topic config's default, with Kafka's
// converter to the topic config's unit (log.retention.hours -> ms).
struct ConfigSynonym {
  const char* name;
  int64_t ms_per_unit = 1;  // 1: taken as it is
};

// Kafka's ServerTopicConfigSynonyms entry: a topic config and its broker
// synonyms, highest precedence first.
struct TopicConfigSynonyms {
  const char* topic_key;
  std::vector<ConfigSynonym> broker_keys;
};

// The tables, in Kafka's declaration order of each family.
std::span<const ConfigKey> broker_config_keys();
std::span<const ConfigKey> topic_config_keys();
std::span<const TopicConfigSynonyms> topic_config_synonyms();

const ConfigKey* find_broker_key(std::string_view name);
const ConfigKey* find_topic_key(std::string_view name);
// The broker synonyms of a topic config (empty when it has none).
std::span<const ConfigSynonym> broker_synonyms_of(std::string_view topic_key);
// The topic config a broker key is a synonym of, or nullptr.
const TopicConfigSynonyms* topic_config_of_synonym(std::string_view broker_key);
// Kafka's DynamicBrokerConfig.brokerConfigSynonyms: the broker keys that set
// the same value as `name`, highest precedence first (`name` alone when none).
std::vector<std::string> broker_config_synonyms(std::string_view name);

// Checks a value against its key's type and validator; Kafka's text after
// "Invalid value V for configuration K: ", or "" when valid.
std::string check_value(const ConfigKey& key, std::string_view value);
// "Invalid value V for configuration K: <why>", or "" when valid.
std::string invalid_value_message(const ConfigKey& key, std::string_view value);

// Kafka's parse of a value check_value accepted, trimmed as ConfigDef does.
bool parse_bool(std::string_view value);
int64_t parse_integer(std::string_view value);  // INT, SHORT and LONG
double parse_double(std::string_view value);
std::vector<std::string> parse_list(std::string_view value);  // empty items dropped

std::string trim(std::string_view s);

}  // namespace runnel::broker
