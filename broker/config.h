// The broker's configuration: Kafka's server.properties names and defaults.
//
// Every key Runnel reads is declared once in config_def.cc with its type,
// Kafka's default and its validator. A key Runnel does not know is reported
// at startup (and ignored); a known key with an invalid value stops startup
// with a message that names the key. Values are looked up by Kafka's name.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "broker/config_def.h"

namespace runnel::broker {

// One listener: NAME://host:port (host empty means every interface).
struct Listener {
  std::string name;
  std::string host;
  uint16_t port = 0;
};

// Where a broker config's value comes from, highest precedence first:
// Kafka's dynamic broker configs (KIP-226) set at runtime for this broker
// (BROKER "<node id>") or as the cluster-wide default (BROKER ""), then
// server.properties and --override, then Kafka's default.
enum class ConfigLayer { dynamic_broker, dynamic_default, static_broker, default_value };

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The broker keys read while serving requests, typed (Kafka's KafkaConfig
// accessors): built from the layers whenever they change (from(),
// set_dynamic_configs()), so request paths read fields, never names.
struct TypedBrokerConfig {
  bool auto_create_topics_enable = true;    // auto.create.topics.enable
  bool delete_topic_enable = true;          // delete.topic.enable
  int32_t num_partitions = 1;               // num.partitions
  int32_t default_replication_factor = 1;   // default.replication.factor
  int32_t fetch_max_bytes = 57671680;       // fetch.max.bytes
  std::optional<std::string> broker_rack;   // broker.rack
  bool acks_all_fsync = true;               // runnel.acks.all.fsync

  bool operator==(const TypedBrokerConfig&) const = default;
};

class BrokerConfig {
 public:
  // Reads a server.properties file (Java properties syntax: '#' and '!'
  // comments, key=value or key: value, backslash continuations).
  static std::map<std::string, std::string> parse_properties(const std::string& text);

  // Builds the config from properties plus --override values; throws
  // ConfigError naming the key when a value is invalid. Unknown keys are
  // collected in unknown_keys().
  static BrokerConfig from(std::map<std::string, std::string> props);

  bool get_bool(const std::string& name) const;
  int32_t get_int(const std::string& name) const;
  int64_t get_long(const std::string& name) const;
  double get_double(const std::string& name) const;
  std::string get_string(const std::string& name) const;  // "" when null
  std::optional<std::string> get_optional(const std::string& name) const;
  std::vector<std::string> get_list(const std::string& name) const;
  // Set in any layer above Kafka's default.
  bool is_set(const std::string& name) const;
  // The value a layer holds for a key, if it holds one.
  std::optional<std::string> layer_value(ConfigLayer layer, const std::string& name) const;

  // The dynamic layers (dynamic_broker or dynamic_default only).
  const std::map<std::string, std::string>& dynamic_configs(ConfigLayer layer) const;
  void set_dynamic_configs(ConfigLayer layer, std::map<std::string, std::string> configs);

  // The per-listener keys (listener.name.<l>.<key>) any layer sets, sorted.
  std::vector<std::string> listener_override_names() const;

  // The request-path keys, typed, as the layers now hold them.
  const TypedBrokerConfig& typed() const { return typed_; }

  const std::vector<std::string>& unknown_keys() const { return unknown_; }
  // Keys set in server.properties or --override that Runnel accepts but
  // does not act on, each with why (reported at startup).
  std::vector<std::pair<std::string, std::string>> accepted_not_acted_on() const;
  // The value to show for a key: explicit, else the default (nullopt if null).
  std::optional<std::string> value_or_default(const std::string& name) const;

  // Derived settings, in Kafka's precedence order.
  int32_t node_id() const;
  std::vector<Listener> listeners() const;
  std::vector<Listener> advertised_listeners() const;
  std::vector<std::string> log_dirs() const;
  int64_t log_retention_ms() const;  // log.retention.ms > .minutes > .hours
  int64_t log_roll_ms() const;       // log.roll.ms > log.roll.hours

 private:
  const std::string* find_value(const std::string& name) const;  // highest layer that sets it

  std::map<std::string, std::string> values_;           // static_broker
  std::map<std::string, std::string> dynamic_broker_;   // BROKER "<node id>"
  std::map<std::string, std::string> dynamic_default_;  // BROKER ""
  std::vector<std::string> unknown_;
  TypedBrokerConfig typed_;

  void rebuild_typed();
};

// listener.name.<listener>.<key>: the broker key a per-listener override
// sets (ssl.*, sasl.*, connections.max.reauth.ms, and per mechanism
// listener.name.<listener>.<mechanism>.sasl.jaas.config), else nullptr.
const ConfigKey* listener_override_key(const std::string& name);

std::vector<Listener> parse_listeners(const std::string& spec, const std::string& key);
// The same parse: why `spec` is not a listener list (after Kafka's "Invalid
// value ... for configuration K: "), or "" with `out` filled.
std::string parse_listeners(std::string_view spec, std::vector<Listener>& out);

}  // namespace runnel::broker
