#include "broker/config.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <sstream>

#include "broker/security_config.h"

namespace runnel::broker {

namespace {

std::vector<std::string> split_list(const std::string& v) { return parse_list(v); }

template <typename N>
bool parse_number(const std::string& s, N& out) {
  auto t = trim(s);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}

}  // namespace

// listener.name.<listener>.<key>: the broker key a per-listener override
// sets, when it is one that may be set per listener (ssl.*, sasl.*,
// connections.max.reauth.ms, max.connections, max.connection.creation.rate,
// and the reauth and JAAS keys per mechanism too:
// listener.name.<listener>.<mechanism>.sasl.jaas.config), else nullptr.
const ConfigKey* listener_override_key(const std::string& name) {
  const std::string prefix = "listener.name.";
  if (!name.starts_with(prefix)) return nullptr;
  auto dot = name.find('.', prefix.size());
  if (dot == std::string::npos) return nullptr;
  std::string key = name.substr(dot + 1);
  auto per_listener = [](const std::string& k) {
    return k.starts_with("ssl.") || k.starts_with("sasl.") || k == "connections.max.reauth.ms" ||
           k == "max.connections" || k == "max.connection.creation.rate";
  };
  if (per_listener(key)) return find_broker_key(key);
  // A mechanism name (plain, scram-sha-256, ...) has no dot in it.
  auto mechanism_dot = key.find('.');
  if (mechanism_dot == std::string::npos) return nullptr;
  std::string per_mechanism = key.substr(mechanism_dot + 1);
  if (per_mechanism == "sasl.jaas.config" || per_mechanism == "connections.max.reauth.ms")
    return find_broker_key(per_mechanism);
  return nullptr;
}

std::map<std::string, std::string> BrokerConfig::parse_properties(const std::string& text) {
  std::map<std::string, std::string> props;
  std::stringstream ss(text);
  std::string line, logical;
  while (std::getline(ss, line)) {
    std::string t = trim(line);
    if (logical.empty() && (t.empty() || t[0] == '#' || t[0] == '!')) continue;
    // An odd number of trailing backslashes continues the line.
    size_t slashes = 0;
    while (slashes < t.size() && t[t.size() - 1 - slashes] == '\\') ++slashes;
    if (slashes % 2 == 1) {
      logical += t.substr(0, t.size() - 1);
      continue;
    }
    logical += t;
    size_t sep = logical.find_first_of("=:");
    std::string key = trim(logical.substr(0, sep));
    std::string value = sep == std::string::npos ? "" : trim(logical.substr(sep + 1));
    if (!key.empty()) props[key] = value;
    logical.clear();
  }
  return props;
}

BrokerConfig BrokerConfig::from(std::map<std::string, std::string> props) {
  BrokerConfig c;
  for (auto& [k, v] : props) {
    const ConfigKey* key = find_broker_key(k);
    if (!key) key = listener_override_key(k);  // validated as the key it overrides
    if (!key) {
      c.unknown_.push_back(k);
      continue;
    }
    if (auto err = invalid_value_message(*key, v); !err.empty()) throw ConfigError(err);
    c.values_[k] = trim(v);
  }
  // Cross-key checks Kafka makes at startup.
  refuse_unimplemented_security(c, props);
  authorizer_configured(c);  // throws for a class Runnel does not implement
  c.rebuild_typed();
  if (c.node_id() < 0)
    throw ConfigError("Missing required configuration node.id (or broker.id): a non-negative integer");
  if (c.is_set("node.id") && c.is_set("broker.id") && c.get_int("node.id") != c.get_int("broker.id"))
    throw ConfigError("Invalid configuration: broker.id " + c.get_string("broker.id") +
                      " must equal node.id " + c.get_string("node.id"));
  // Kafka's KafkaConfig requirement, word for word: `log.dirs=` (or an
  // empty log.dir) leaves the broker nowhere to keep anything.
  if (c.log_dirs().empty())
    throw ConfigError("At least one log directory must be defined via log.dirs or log.dir.");
  if (c.get_int("group.min.session.timeout.ms") > c.get_int("group.max.session.timeout.ms"))
    throw ConfigError("Invalid configuration: group.min.session.timeout.ms must not exceed group.max.session.timeout.ms");
  // Kafka's GroupCoordinatorConfig requirements on the consumer group
  // protocol's timeouts, in its words.
  const auto at_least = [&c](const char* name, const char* floor) {
    if (c.get_int(name) < c.get_int(floor))
      throw ConfigError(std::string(name) + " must be greater than or equal to " + floor);
  };
  const auto at_most = [&c](const char* name, const char* ceiling) {
    if (c.get_int(name) > c.get_int(ceiling))
      throw ConfigError(std::string(name) + " must be less than or equal to " + ceiling);
  };
  at_least("group.consumer.max.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms");
  at_least("group.consumer.max.session.timeout.ms", "group.consumer.min.session.timeout.ms");
  at_least("group.consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms");
  at_most("group.consumer.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms");
  at_least("group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms");
  at_most("group.consumer.session.timeout.ms", "group.consumer.max.session.timeout.ms");
  if (c.get_int("group.consumer.heartbeat.interval.ms") >= c.get_int("group.consumer.session.timeout.ms"))
    throw ConfigError("group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms");
  return c;
}

std::vector<std::pair<std::string, std::string>> BrokerConfig::accepted_not_acted_on() const {
  std::vector<std::pair<std::string, std::string>> out;
  const bool cluster = !get_list("runnel.etcd.endpoints").empty();
  for (const auto& key : broker_config_keys())
    if (key.not_acted_on && values_.count(key.name) && !(cluster && key.acted_on_in_cluster))
      out.emplace_back(key.name, key.not_acted_on);
  return out;
}

const std::string* BrokerConfig::find_value(const std::string& name) const {
  for (const auto* layer : {&dynamic_broker_, &dynamic_default_, &values_})
    if (auto it = layer->find(name); it != layer->end()) return &it->second;
  return nullptr;
}

bool BrokerConfig::is_set(const std::string& name) const { return find_value(name) != nullptr; }

std::vector<std::string> BrokerConfig::listener_override_names() const {
  std::set<std::string> names;
  for (const auto* layer : {&dynamic_broker_, &dynamic_default_, &values_})
    for (const auto& [k, v] : *layer)
      if (listener_override_key(k)) names.insert(k);
  return {names.begin(), names.end()};
}

std::optional<std::string> BrokerConfig::layer_value(ConfigLayer layer, const std::string& name) const {
  const std::map<std::string, std::string>* m = nullptr;
  switch (layer) {
    case ConfigLayer::dynamic_broker: m = &dynamic_broker_; break;
    case ConfigLayer::dynamic_default: m = &dynamic_default_; break;
    case ConfigLayer::static_broker: m = &values_; break;
    case ConfigLayer::default_value: {
      const ConfigKey* key = find_broker_key(name);
      if (!key || !key->default_value) return std::nullopt;
      return std::string(key->default_value);
    }
  }
  if (auto it = m->find(name); it != m->end()) return it->second;
  return std::nullopt;
}

const std::map<std::string, std::string>& BrokerConfig::dynamic_configs(ConfigLayer layer) const {
  if (layer == ConfigLayer::dynamic_broker) return dynamic_broker_;
  if (layer == ConfigLayer::dynamic_default) return dynamic_default_;
  throw std::logic_error("not a dynamic config layer");
}

void BrokerConfig::set_dynamic_configs(ConfigLayer layer, std::map<std::string, std::string> configs) {
  if (layer == ConfigLayer::dynamic_broker)
    dynamic_broker_ = std::move(configs);
  else if (layer == ConfigLayer::dynamic_default)
    dynamic_default_ = std::move(configs);
  else
    throw std::logic_error("not a dynamic config layer");
  rebuild_typed();
}

void BrokerConfig::rebuild_typed() {
  TypedBrokerConfig t;
  t.auto_create_topics_enable = get_bool("auto.create.topics.enable");
  t.delete_topic_enable = get_bool("delete.topic.enable");
  t.num_partitions = get_int("num.partitions");
  t.default_replication_factor = get_int("default.replication.factor");
  t.fetch_max_bytes = get_int("fetch.max.bytes");
  t.broker_rack = get_optional("broker.rack");
  t.acks_all_fsync = get_bool("runnel.acks.all.fsync");
  typed_ = std::move(t);
}

std::optional<std::string> BrokerConfig::value_or_default(const std::string& name) const {
  if (const std::string* v = find_value(name)) return *v;
  const ConfigKey* key = find_broker_key(name);
  if (!key) throw std::logic_error("undeclared config " + name);
  if (!key->default_value) return std::nullopt;
  return std::string(key->default_value);
}

std::optional<std::string> BrokerConfig::get_optional(const std::string& name) const {
  return value_or_default(name);
}

std::string BrokerConfig::get_string(const std::string& name) const {
  return value_or_default(name).value_or("");
}

bool BrokerConfig::get_bool(const std::string& name) const {
  auto v = get_string(name);
  std::transform(v.begin(), v.end(), v.begin(), ::tolower);
  return v == "true";
}

int32_t BrokerConfig::get_int(const std::string& name) const {
  int32_t v = 0;
  parse_number(get_string(name), v);
  return v;
}

int64_t BrokerConfig::get_long(const std::string& name) const {
  int64_t v = 0;
  parse_number(get_string(name), v);
  return v;
}

double BrokerConfig::get_double(const std::string& name) const {
  double v = 0;
  parse_number(get_string(name), v);
  return v;
}

std::vector<std::string> BrokerConfig::get_list(const std::string& name) const {
  return split_list(get_string(name));
}

int32_t BrokerConfig::node_id() const {
  int32_t id = get_int("node.id");
  return id >= 0 ? id : get_int("broker.id");
}

std::string parse_listeners(std::string_view spec, std::vector<Listener>& out) {
  out.clear();
  for (auto& item : parse_list(spec)) {
    auto scheme = item.find("://");
    auto colon = item.rfind(':');
    if (scheme == std::string::npos || colon == std::string::npos || colon < scheme + 3)
      return "listener must be NAME://host:port";
    Listener l;
    l.name = item.substr(0, scheme);
    l.host = item.substr(scheme + 3, colon - scheme - 3);
    if (l.host.size() >= 2 && l.host.front() == '[' && l.host.back() == ']')
      l.host = l.host.substr(1, l.host.size() - 2);
    int port = -1;
    if (!parse_number(item.substr(colon + 1), port) || port < 0 || port > 65535) return "bad port in " + item;
    l.port = static_cast<uint16_t>(port);
    for (auto& other : out)
      if (other.name == l.name) return "each listener must have a different name";
    out.push_back(l);
  }
  return "";
}

std::vector<Listener> parse_listeners(const std::string& spec, const std::string& key) {
  std::vector<Listener> out;
  if (auto err = parse_listeners(std::string_view(spec), out); !err.empty())
    throw ConfigError("Invalid value " + spec + " for configuration " + key + ": " + err);
  return out;
}

std::vector<Listener> BrokerConfig::listeners() const {
  return parse_listeners(get_string("listeners"), "listeners");
}

std::vector<Listener> BrokerConfig::advertised_listeners() const {
  auto adv = get_optional("advertised.listeners");
  if (!adv) return listeners();
  return parse_listeners(*adv, "advertised.listeners");
}

std::vector<std::string> BrokerConfig::log_dirs() const {
  auto dirs = get_optional("log.dirs");
  // Kafka splits log.dir as a list too (parseCsvList of either key).
  return split_list(dirs ? *dirs : get_string("log.dir"));
}

int64_t BrokerConfig::log_retention_ms() const {
  if (auto ms = get_optional("log.retention.ms")) return get_long("log.retention.ms");
  if (auto m = get_optional("log.retention.minutes")) {
    int64_t v = get_int("log.retention.minutes");
    return v < 0 ? -1 : v * 60 * 1000;
  }
  int64_t h = get_int("log.retention.hours");
  return h < 0 ? -1 : h * 60 * 60 * 1000;
}

int64_t BrokerConfig::log_roll_ms() const {
  if (get_optional("log.roll.ms")) return get_long("log.roll.ms");
  return static_cast<int64_t>(get_int("log.roll.hours")) * 60 * 60 * 1000;
}

}  // namespace runnel::broker
