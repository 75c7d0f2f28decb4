#include "broker/config.h"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "broker/security_config.h"
#include "broker/topic_config.h"

namespace runnel::broker {

namespace {

using T = ConfigType;
constexpr int64_t kIntMax = INT32_MAX;

// Kafka's names and defaults (KafkaConfig, ServerLogConfigs, SocketServerConfigs,
// GroupCoordinatorConfig, TransactionLogConfig). Only keys Runnel acts on.
const std::vector<ConfigDef> kDefs = {
    // Identity and listeners.
    {"node.id", T::int_, "-1", -1, kIntMax},
    {"broker.id", T::int_, "-1", -1, kIntMax},
    {"listeners", T::list, "PLAINTEXT://:9092"},
    {"advertised.listeners", T::list, nullptr},
    {"listener.security.protocol.map", T::list,
     "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"},
    {"inter.broker.listener.name", T::string, nullptr},
    // Only PLAINTEXT is served until security lands (security_config.h).
    {"security.inter.broker.protocol", T::string, "PLAINTEXT", 0, 0, {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}},
    {"broker.rack", T::string, nullptr},
    // Log directories.
    {"log.dirs", T::list, nullptr},
    {"log.dir", T::string, "/tmp/kafka-logs"},
    // Topic defaults.
    {"num.partitions", T::int_, "1", 1, kIntMax},
    {"default.replication.factor", T::int_, "1", 1, kIntMax},
    {"auto.create.topics.enable", T::boolean, "true"},
    {"delete.topic.enable", T::boolean, "true"},
    {"min.insync.replicas", T::int_, "1", 1, kIntMax, {}, true},
    {"message.max.bytes", T::int_, "1048588", 0, kIntMax, {}, true},
    {"compression.type", T::string, "producer", 0, 0,
     {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}, true},
    {"compression.gzip.level", T::int_, "-1", -1, 9, {}, true},
    {"compression.lz4.level", T::int_, "9", 1, 17, {}, true},
    {"compression.zstd.level", T::int_, "3", -131072, 22, {}, true},
    // Network.
    {"socket.request.max.bytes", T::int_, "104857600", 1, kIntMax},
    {"socket.send.buffer.bytes", T::int_, "102400", -1, kIntMax},
    {"socket.receive.buffer.bytes", T::int_, "102400", -1, kIntMax},
    {"connections.max.idle.ms", T::long_, "600000"},
    {"queued.max.requests", T::int_, "500", 1, kIntMax},
    {"queued.max.request.bytes", T::long_, "-1"},
    {"num.network.threads", T::int_, "3", 1, kIntMax},
    {"num.io.threads", T::int_, "8", 1, kIntMax},
    {"request.timeout.ms", T::int_, "30000", 0, kIntMax},
    {"fetch.max.bytes", T::int_, "57671680", 1024, kIntMax},  // caps a Fetch response's records
    // Log segments, retention, flushing (log.* are defaults of topic configs).
    {"log.segment.bytes", T::int_, "1073741824", 14, kIntMax, {}, true},
    {"log.roll.ms", T::long_, nullptr, 1, INT64_MAX, {}, true},
    {"log.roll.hours", T::int_, "168", 1, kIntMax, {}, true},
    {"log.roll.jitter.ms", T::long_, nullptr, 0, INT64_MAX, {}, true},
    {"log.roll.jitter.hours", T::int_, "0", 0, kIntMax, {}, true},
    {"log.index.size.max.bytes", T::int_, "10485760", 4, kIntMax, {}, true},
    {"log.index.interval.bytes", T::int_, "4096", 0, kIntMax, {}, true},
    {"log.retention.ms", T::long_, nullptr, -1, INT64_MAX, {}, true},
    {"log.retention.minutes", T::int_, nullptr, -1, kIntMax, {}, true},
    {"log.retention.hours", T::int_, "168", -1, kIntMax, {}, true},
    {"log.retention.bytes", T::long_, "-1", -1, INT64_MAX, {}, true},
    {"log.retention.check.interval.ms", T::long_, "300000", 1, INT64_MAX},
    {"log.segment.delete.delay.ms", T::long_, "60000", 0, INT64_MAX, {}, true},
    {"log.flush.interval.messages", T::long_, "9223372036854775807", 1, INT64_MAX, {}, true},
    {"log.flush.interval.ms", T::long_, nullptr, 0, INT64_MAX, {}, true},
    {"log.flush.scheduler.interval.ms", T::long_, "9223372036854775807", 0, INT64_MAX},
    {"log.flush.offset.checkpoint.interval.ms", T::int_, "60000", 0, kIntMax},
    {"log.flush.start.offset.checkpoint.interval.ms", T::int_, "60000", 0, kIntMax},
    {"log.cleanup.policy", T::list, "delete", 0, 0, {"compact", "delete"}, true},
    {"log.cleaner.enable", T::boolean, "true"},
    {"log.cleaner.threads", T::int_, "1", 0, kIntMax},
    {"log.cleaner.backoff.ms", T::long_, "15000", 0, INT64_MAX},
    {"log.cleaner.min.cleanable.ratio", T::double_, "0.5", 0, 1, {}, true},
    {"log.cleaner.delete.retention.ms", T::long_, "86400000", 0, INT64_MAX, {}, true},
    {"log.cleaner.min.compaction.lag.ms", T::long_, "0", 0, INT64_MAX, {}, true},
    {"log.cleaner.max.compaction.lag.ms", T::long_, "9223372036854775807", 1, INT64_MAX, {}, true},
    {"log.message.timestamp.type", T::string, "CreateTime", 0, 0, {"CreateTime", "LogAppendTime"}, true},
    {"log.message.timestamp.before.max.ms", T::long_, "9223372036854775807", 0, INT64_MAX, {}, true},
    {"log.message.timestamp.after.max.ms", T::long_, "3600000", 0, INT64_MAX, {}, true},
    {"log.preallocate", T::boolean, "false", 0, 0, {}, true},
    {"unclean.leader.election.enable", T::boolean, "false"},
    {"num.recovery.threads.per.data.dir", T::int_, "2", 1, kIntMax},
    // Groups and offsets.
    {"offsets.topic.num.partitions", T::int_, "50", 1, kIntMax},
    {"offsets.topic.replication.factor", T::int_, "3", 1, INT16_MAX},
    {"offsets.topic.segment.bytes", T::int_, "104857600", 1, kIntMax},
    {"offsets.retention.minutes", T::int_, "10080", 1, kIntMax},
    {"offsets.retention.check.interval.ms", T::long_, "600000", 1, INT64_MAX},
    {"offsets.commit.timeout.ms", T::int_, "5000", 1, kIntMax},
    {"offset.metadata.max.bytes", T::int_, "4096", 0, kIntMax},
    {"group.initial.rebalance.delay.ms", T::int_, "3000", 0, kIntMax},
    {"group.min.session.timeout.ms", T::int_, "6000", 0, kIntMax},
    {"group.max.session.timeout.ms", T::int_, "1800000", 0, kIntMax},
    {"group.max.size", T::int_, "2147483647", 1, kIntMax},
    // Producers and transactions.
    {"producer.id.expiration.ms", T::int_, "86400000", 1, kIntMax},
    {"producer.id.expiration.check.interval.ms", T::int_, "600000", 1, kIntMax},
    {"transactional.id.expiration.ms", T::int_, "604800000", 1, kIntMax},
    {"transaction.state.log.num.partitions", T::int_, "50", 1, kIntMax},
    {"transaction.state.log.replication.factor", T::int_, "3", 1, INT16_MAX},
    {"transaction.state.log.min.isr", T::int_, "2", 1, kIntMax},
    {"transaction.max.timeout.ms", T::int_, "900000", 1, kIntMax},
    // KRaft settings found in Kafka's sample server.properties; a single
    // Runnel node is its own controller, so they are read and not needed.
    {"process.roles", T::list, nullptr, 0, 0, {"broker", "controller"}},
    {"controller.quorum.voters", T::list, nullptr},
    {"controller.quorum.bootstrap.servers", T::list, nullptr},
    {"controller.listener.names", T::list, nullptr},
    {"cluster.id", T::string, nullptr},
    // Runnel's own: the one deliberate difference from Kafka's durability.
    // acks=all appends are fsynced before they are acknowledged (group commit
    // shares one fdatasync among concurrent producers). false = Kafka's way.
    {"runnel.acks.all.fsync", T::boolean, "true"},
};

// Kafka keys Runnel accepts, so that Kafka's own server.properties starts,
// but does not act on; one set explicitly is reported at startup with why,
// never silently accepted (DESIGN).
struct NotActedOn {
  const char* name;
  const char* why;
};
const NotActedOn kNotActedOn[] = {
    {"num.network.threads", "one event-loop thread serves every connection"},
    {"socket.send.buffer.bytes", "sockets keep the kernel's default buffer sizes"},
    {"socket.receive.buffer.bytes", "sockets keep the kernel's default buffer sizes"},
    {"queued.max.requests", "each connection serves one request at a time; queued.max.request.bytes bounds memory"},
    {"log.flush.start.offset.checkpoint.interval.ms", "log start offsets are checkpointed with the recovery points"},
    {"log.cleaner.threads", "the cleaner runs in the periodic background log work"},
    {"log.cleaner.backoff.ms", "the cleaner runs in the periodic background log work"},
    {"num.recovery.threads.per.data.dir", "log dirs are recovered by one thread"},
    {"inter.broker.listener.name", "a single node has no inter-broker traffic"},
    {"offsets.topic.replication.factor", "a single node creates __consumer_offsets with replication factor 1"},
    {"offsets.commit.timeout.ms", "a commit completes when its append does"},
    {"transactional.id.expiration.ms", "transactions are not implemented yet"},
    {"transaction.state.log.num.partitions", "transactions are not implemented yet"},
    {"transaction.state.log.replication.factor", "transactions are not implemented yet"},
    {"transaction.state.log.min.isr", "transactions are not implemented yet"},
    {"transaction.max.timeout.ms", "transactions are not implemented yet"},
    {"process.roles", "a single Runnel node is its own controller"},
    {"controller.quorum.voters", "a single Runnel node is its own controller"},
    {"controller.quorum.bootstrap.servers", "a single Runnel node is its own controller"},
    {"controller.listener.names", "a single Runnel node is its own controller"},
};

std::string trim(std::string s) {
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  s.erase(s.begin(), std::find_if(s.begin(), s.end(), not_space));
  s.erase(std::find_if(s.rbegin(), s.rend(), not_space).base(), s.end());
  return s;
}

std::vector<std::string> split_list(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

template <typename N>
bool parse_number(const std::string& s, N& out) {
  auto t = trim(s);
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), out);
  return ec == std::errc() && p == t.data() + t.size() && !t.empty();
}

}  // namespace

const std::vector<ConfigDef>& BrokerConfig::definitions() { return kDefs; }

const ConfigDef* BrokerConfig::find_definition(const std::string& name) {
  for (const auto& d : kDefs)
    if (name == d.name) return &d;
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

std::string BrokerConfig::check_value(const ConfigDef& def, const std::string& value) {
  // Kafka's ConfigDef.Range: the bound is compared in the value's own type
  // (a double as a double, never truncated), lower bound first, and INT64_MIN
  // / INT64_MAX mean no bound.
  auto range = [&](auto v) -> std::string {
    if (def.min != INT64_MIN && v < static_cast<decltype(v)>(def.min))
      return "Value must be at least " + std::to_string(def.min);
    if (def.max != INT64_MAX && v > static_cast<decltype(v)>(def.max))
      return "Value must be no more than " + std::to_string(def.max);
    return "";
  };
  switch (def.type) {
    case T::boolean: {
      auto v = trim(value);
      std::transform(v.begin(), v.end(), v.begin(), ::tolower);
      return v == "true" || v == "false" ? "" : "Expected value to be either true or false";
    }
    case T::int_: {
      int32_t v;
      if (!parse_number(value, v)) return "Not a number of type INT";
      return range(v);
    }
    case T::long_: {
      int64_t v;
      if (!parse_number(value, v)) return "Not a number of type LONG";
      return range(v);
    }
    case T::double_: {
      double v;
      if (!parse_number(value, v)) return "Not a number of type DOUBLE";
      return range(v);
    }
    case T::string:
      if (!def.valid_values.empty() &&
          std::find(def.valid_values.begin(), def.valid_values.end(), trim(value)) == def.valid_values.end())
        return "String must be one of: " + [&] {
          std::string s;
          for (auto& v : def.valid_values) s += (s.empty() ? "" : ", ") + v;
          return s;
        }();
      return "";
    case T::list:
      if (!def.valid_values.empty())
        for (auto& item : split_list(value))
          if (std::find(def.valid_values.begin(), def.valid_values.end(), item) == def.valid_values.end())
            return "Invalid value " + item + " in list";
      return "";
    case T::password:
      return "";
  }
  return "";
}

BrokerConfig BrokerConfig::from(std::map<std::string, std::string> props) {
  BrokerConfig c;
  for (auto& [k, v] : props) {
    const ConfigDef* def = find_definition(k);
    if (!def) {
      c.unknown_.push_back(k);
      continue;
    }
    std::string err = check_value(*def, v);
    if (err.empty() && def->topic_config_synonym) err = check_topic_default(k, trim(v));
    if (!err.empty())
      throw ConfigError("Invalid value " + v + " for configuration " + k + ": " + err);
    c.values_[k] = trim(v);
  }
  // Cross-key checks Kafka makes at startup.
  c.listeners();  // throws on a malformed listener
  c.advertised_listeners();
  refuse_unimplemented_security(c, props);
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
  return c;
}

std::vector<std::pair<std::string, std::string>> BrokerConfig::accepted_not_acted_on() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& n : kNotActedOn)
    if (values_.count(n.name)) out.emplace_back(n.name, n.why);
  return out;
}

const std::string* BrokerConfig::find_value(const std::string& name) const {
  for (const auto* layer : {&dynamic_broker_, &dynamic_default_, &values_})
    if (auto it = layer->find(name); it != layer->end()) return &it->second;
  return nullptr;
}

bool BrokerConfig::is_set(const std::string& name) const { return find_value(name) != nullptr; }

std::optional<std::string> BrokerConfig::layer_value(ConfigLayer layer, const std::string& name) const {
  const std::map<std::string, std::string>* m = nullptr;
  switch (layer) {
    case ConfigLayer::dynamic_broker: m = &dynamic_broker_; break;
    case ConfigLayer::dynamic_default: m = &dynamic_default_; break;
    case ConfigLayer::static_broker: m = &values_; break;
    case ConfigLayer::default_value: {
      const ConfigDef* def = find_definition(name);
      if (!def || !def->default_value) return std::nullopt;
      return std::string(def->default_value);
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
}

std::optional<std::string> BrokerConfig::value_or_default(const std::string& name) const {
  if (const std::string* v = find_value(name)) return *v;
  const ConfigDef* def = find_definition(name);
  if (!def) throw std::logic_error("undeclared config " + name);
  if (!def->default_value) return std::nullopt;
  return std::string(def->default_value);
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

std::vector<Listener> parse_listeners(const std::string& spec, const std::string& key) {
  std::vector<Listener> out;
  for (auto& item : split_list(spec)) {
    auto scheme = item.find("://");
    auto colon = item.rfind(':');
    if (scheme == std::string::npos || colon == std::string::npos || colon < scheme + 3)
      throw ConfigError("Invalid value " + spec + " for configuration " + key +
                        ": listener must be NAME://host:port");
    Listener l;
    l.name = item.substr(0, scheme);
    l.host = item.substr(scheme + 3, colon - scheme - 3);
    if (l.host.size() >= 2 && l.host.front() == '[' && l.host.back() == ']')
      l.host = l.host.substr(1, l.host.size() - 2);
    int port = -1;
    if (!parse_number(item.substr(colon + 1), port) || port < 0 || port > 65535)
      throw ConfigError("Invalid value " + spec + " for configuration " + key + ": bad port in " + item);
    l.port = static_cast<uint16_t>(port);
    for (auto& other : out)
      if (other.name == l.name)
        throw ConfigError("Invalid value " + spec + " for configuration " + key +
                          ": each listener must have a different name");
    out.push_back(l);
  }
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
