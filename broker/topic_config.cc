#include "broker/topic_config.h"

#include <algorithm>

#include "storage/log_config.h"

namespace runnel::broker {

namespace {

using T = ConfigType;
constexpr int64_t kIntMax = INT32_MAX;
constexpr const char* kLongMax = "9223372036854775807";

// Kafka's LogConfig / TopicConfig. Tiered-storage and replication-throttle
// configs are left out: Runnel does not implement them, so setting them is
// rejected rather than silently accepted.
const std::vector<TopicConfigDef> kTopicDefs = {
    {{"cleanup.policy", T::list, "delete", 0, 0, {"compact", "delete"}}, {"log.cleanup.policy"}},
    {{"compression.type", T::string, "producer", 0, 0, {"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}},
     {"compression.type"}},
    {{"compression.gzip.level", T::int_, "-1", -1, 9}, {"compression.gzip.level"}},
    {{"compression.lz4.level", T::int_, "9", 1, 17}, {"compression.lz4.level"}},
    {{"compression.zstd.level", T::int_, "3", -131072, 22}, {"compression.zstd.level"}},
    {{"delete.retention.ms", T::long_, "86400000", 0, INT64_MAX}, {"log.cleaner.delete.retention.ms"}},
    {{"file.delete.delay.ms", T::long_, "60000", 0, INT64_MAX}, {"log.segment.delete.delay.ms"}},
    {{"flush.messages", T::long_, kLongMax, 1, INT64_MAX}, {"log.flush.interval.messages"}},
    {{"flush.ms", T::long_, kLongMax, 0, INT64_MAX}, {"log.flush.interval.ms"}},
    {{"index.interval.bytes", T::int_, "4096", 0, kIntMax}, {"log.index.interval.bytes"}},
    {{"max.compaction.lag.ms", T::long_, kLongMax, 1, INT64_MAX}, {"log.cleaner.max.compaction.lag.ms"}},
    {{"max.message.bytes", T::int_, "1048588", 0, kIntMax}, {"message.max.bytes"}},
    {{"message.timestamp.after.max.ms", T::long_, "3600000", 0, INT64_MAX}, {"log.message.timestamp.after.max.ms"}},
    {{"message.timestamp.before.max.ms", T::long_, kLongMax, 0, INT64_MAX}, {"log.message.timestamp.before.max.ms"}},
    {{"message.timestamp.type", T::string, "CreateTime", 0, 0, {"CreateTime", "LogAppendTime"}},
     {"log.message.timestamp.type"}},
    {{"min.cleanable.dirty.ratio", T::double_, "0.5", 0, 1}, {"log.cleaner.min.cleanable.ratio"}},
    {{"min.compaction.lag.ms", T::long_, "0", 0, INT64_MAX}, {"log.cleaner.min.compaction.lag.ms"}},
    {{"min.insync.replicas", T::int_, "1", 1, kIntMax}, {"min.insync.replicas"}},
    {{"preallocate", T::boolean, "false"}, {"log.preallocate"}},
    {{"retention.bytes", T::long_, "-1", INT64_MIN, INT64_MAX}, {"log.retention.bytes"}},
    {{"retention.ms", T::long_, "604800000", -1, INT64_MAX},
     {"log.retention.ms", "log.retention.minutes", "log.retention.hours"}},
    {{"segment.bytes", T::int_, "1073741824", 14, kIntMax}, {"log.segment.bytes"}},
    {{"segment.index.bytes", T::int_, "10485760", 4, kIntMax}, {"log.index.size.max.bytes"}},
    {{"segment.jitter.ms", T::long_, "0", 0, INT64_MAX}, {"log.roll.jitter.ms", "log.roll.jitter.hours"}},
    {{"segment.ms", T::long_, "604800000", 1, INT64_MAX}, {"log.roll.ms", "log.roll.hours"}},
    {{"unclean.leader.election.enable", T::boolean, "false"}, {"unclean.leader.election.enable"}},
};

// A broker synonym's value in the topic config's unit: the *.minutes and
// *.hours synonyms of a milliseconds config are converted, as Kafka does.
std::optional<std::string> synonym_value(const BrokerConfig& broker, const std::string& key) {
  auto v = broker.get_optional(key);
  if (!v) return std::nullopt;
  auto ends_with = [&](const char* suffix) {
    std::string s(suffix);
    return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  int64_t factor = ends_with(".minutes") ? 60'000 : ends_with(".hours") ? 3'600'000 : 1;
  if (factor == 1) return v;
  int64_t n = broker.get_long(key);
  return std::to_string(n < 0 ? -1 : n * factor);
}

}  // namespace

const std::vector<TopicConfigDef>& topic_config_defs() { return kTopicDefs; }

const TopicConfigDef* find_topic_config(const std::string& name) {
  for (const auto& d : kTopicDefs)
    if (name == d.def.name) return &d;
  return nullptr;
}

ConfigDataType data_type(ConfigType t) {
  switch (t) {
    case T::boolean: return ConfigDataType::boolean;
    case T::int_: return ConfigDataType::int_;
    case T::long_: return ConfigDataType::long_;
    case T::double_: return ConfigDataType::double_;
    case T::string: return ConfigDataType::string;
    case T::list: return ConfigDataType::list;
    case T::password: return ConfigDataType::password;
  }
  return ConfigDataType::unknown;
}

std::string validate_topic_config(const std::string& name, const std::optional<std::string>& value) {
  const TopicConfigDef* d = find_topic_config(name);
  if (!d) return "Unknown topic config name: " + name;
  if (!value) return "Null value not supported for topic configs: " + name;
  std::string err = BrokerConfig::check_value(d->def, *value);
  if (err.empty()) err = storage_refusal(name, *value);
  if (!err.empty()) return "Invalid value " + *value + " for configuration " + name + ": " + err;
  return "";
}

std::string storage_refusal(const std::string& name, const std::string& value) {
  const auto& names = storage::LogConfig::names();
  if (std::find(names.begin(), names.end(), name) == names.end()) return "";
  storage::LogConfig probe;
  if (probe.set(name, value)) return "Runnel's partition log cannot apply this value";
  return "";
}

std::string check_topic_default(const std::string& broker_key, const std::string& value) {
  // The .minutes and .hours synonyms reach the log converted to ms
  // (synonym_value); only a value passed on as it is can be refused there.
  if (broker_key.ends_with(".minutes") || broker_key.ends_with(".hours")) return "";
  for (const auto& d : kTopicDefs)
    if (std::find(d.synonyms.begin(), d.synonyms.end(), broker_key) != d.synonyms.end())
      return storage_refusal(d.def.name, value);
  return "";
}

ConfigSource config_source(ConfigLayer layer) {
  switch (layer) {
    case ConfigLayer::dynamic_broker: return ConfigSource::dynamic_broker_config;
    case ConfigLayer::dynamic_default: return ConfigSource::dynamic_default_broker_config;
    case ConfigLayer::static_broker: return ConfigSource::static_broker_config;
    case ConfigLayer::default_value: return ConfigSource::default_config;
  }
  return ConfigSource::unknown;
}

std::vector<ConfigEntry::Synonym> broker_synonyms(const BrokerConfig& broker, const std::vector<std::string>& names) {
  // Kafka's ConfigHelper lists them by source first, then by name.
  std::vector<ConfigEntry::Synonym> out;
  for (auto layer : {ConfigLayer::dynamic_broker, ConfigLayer::dynamic_default, ConfigLayer::static_broker,
                     ConfigLayer::default_value})
    for (const auto& n : names)
      if (BrokerConfig::find_definition(n))
        if (auto v = broker.layer_value(layer, n)) out.push_back({n, v, config_source(layer)});
  return out;
}

std::vector<ConfigEntry> describe_topic_configs(const BrokerConfig& broker, const TopicOverrides& overrides) {
  std::vector<ConfigEntry> out;
  for (const auto& d : kTopicDefs) {
    ConfigEntry e;
    e.name = d.def.name;
    e.type = data_type(d.def.type);
    if (auto it = overrides.find(e.name); it != overrides.end())
      e.synonyms.push_back({e.name, it->second, ConfigSource::dynamic_topic_config});
    for (auto& s : broker_synonyms(broker, d.synonyms)) e.synonyms.push_back(std::move(s));
    e.value = topic_config_value(broker, overrides, e.name);
    if (e.synonyms.empty() && !d.def.default_value) e.value = std::nullopt;
    e.source = e.synonyms.empty() ? ConfigSource::default_config : e.synonyms.front().source;
    out.push_back(std::move(e));
  }
  return out;
}

std::string topic_config_value(const BrokerConfig& broker, const TopicOverrides& overrides, const std::string& name) {
  if (auto it = overrides.find(name); it != overrides.end()) return it->second;
  const TopicConfigDef* d = find_topic_config(name);
  if (!d) throw std::logic_error("unknown topic config " + name);
  for (const auto& key : d->synonyms)
    if (broker.is_set(key))
      if (auto v = synonym_value(broker, key)) return *v;
  return d->def.default_value ? d->def.default_value : "";
}

}  // namespace runnel::broker
