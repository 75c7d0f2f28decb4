#include "broker/topic_config.h"

#include <algorithm>
#include <stdexcept>

namespace runnel::broker {

namespace {

using T = ConfigType;

// A broker synonym's value in the topic config's unit: the *.minutes and
// *.hours synonyms of a milliseconds config are converted, as Kafka's
// ConfigSynonym converters do.
std::optional<std::string> synonym_value(const BrokerConfig& broker, const ConfigSynonym& synonym) {
  auto v = broker.get_optional(synonym.name);
  if (!v || synonym.ms_per_unit == 1) return v;
  int64_t n = broker.get_long(synonym.name);
  return std::to_string(n < 0 ? -1 : n * synonym.ms_per_unit);
}

// One typed field of TopicConfig, read from the effective values.
class Reader {
 public:
  Reader(const BrokerConfig& broker, const TopicOverrides& overrides) : broker_(broker), overrides_(overrides) {}

  std::string value(const char* name, ConfigType type) const {
    const ConfigKey* key = find_topic_key(name);
    if (!key || key->type != type) throw std::logic_error(std::string("topic config ") + name + " declared otherwise");
    std::string v = topic_config_value(broker_, overrides_, name);
    if (auto err = invalid_value_message(*key, v); !err.empty())
      throw std::logic_error("topic config rejected by its definition: " + err);
    return v;
  }
  int32_t int_(const char* name) const { return static_cast<int32_t>(parse_integer(value(name, T::int_))); }
  int64_t long_(const char* name) const { return parse_integer(value(name, T::long_)); }
  double double_(const char* name) const { return parse_double(value(name, T::double_)); }
  bool boolean(const char* name) const { return parse_bool(value(name, T::boolean)); }
  std::string string(const char* name) const { return trim(value(name, T::string)); }
  std::vector<std::string> list(const char* name) const { return parse_list(value(name, T::list)); }

 private:
  const BrokerConfig& broker_;
  const TopicOverrides& overrides_;
};

}  // namespace

ConfigDataType data_type(ConfigType t) {
  switch (t) {
    case T::boolean: return ConfigDataType::boolean;
    case T::string: return ConfigDataType::string;
    case T::int_: return ConfigDataType::int_;
    case T::short_: return ConfigDataType::short_;
    case T::long_: return ConfigDataType::long_;
    case T::double_: return ConfigDataType::double_;
    case T::list: return ConfigDataType::list;
    case T::class_: return ConfigDataType::class_;
    case T::password: return ConfigDataType::password;
  }
  return ConfigDataType::unknown;
}

std::string validate_topic_config(const std::string& name, const std::optional<std::string>& value) {
  const ConfigKey* key = find_topic_key(name);
  if (!key) return "Unknown topic config name: " + name;
  if (!value) return "Null value not supported for topic configs: " + name;
  return invalid_value_message(*key, *value);
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
      if (find_broker_key(n) || listener_override_key(n))
        if (auto v = broker.layer_value(layer, n)) out.push_back({n, v, config_source(layer)});
  return out;
}

std::vector<ConfigEntry> describe_topic_configs(const BrokerConfig& broker, const TopicOverrides& overrides) {
  std::vector<ConfigEntry> out;
  for (const auto& key : topic_config_keys()) {
    ConfigEntry e;
    e.name = key.name;
    e.type = data_type(key.type);
    if (key.documentation) e.documentation = key.documentation;
    if (auto it = overrides.find(e.name); it != overrides.end())
      e.synonyms.push_back({e.name, it->second, ConfigSource::dynamic_topic_config});
    std::vector<std::string> names;
    for (const auto& s : broker_synonyms_of(key.name)) names.emplace_back(s.name);
    for (auto& s : broker_synonyms(broker, names)) e.synonyms.push_back(std::move(s));
    e.value = topic_config_value(broker, overrides, e.name);
    if (e.synonyms.empty() && !key.default_value) e.value = std::nullopt;
    e.source = e.synonyms.empty() ? ConfigSource::default_config : e.synonyms.front().source;
    out.push_back(std::move(e));
  }
  return out;
}

std::string topic_config_value(const BrokerConfig& broker, const TopicOverrides& overrides, const std::string& name) {
  if (auto it = overrides.find(name); it != overrides.end()) return it->second;
  const ConfigKey* key = find_topic_key(name);
  if (!key) throw std::logic_error("unknown topic config " + name);
  for (const auto& synonym : broker_synonyms_of(name))
    if (broker.is_set(synonym.name))
      if (auto v = synonym_value(broker, synonym)) return *v;
  return key->default_value ? key->default_value : "";
}

TopicConfig TopicConfig::build(const BrokerConfig& broker, const TopicOverrides& overrides) {
  const Reader r(broker, overrides);
  TopicConfig c;
  storage::LogConfig& log = c.log;
  log.segment_bytes = r.int_("segment.bytes");
  log.segment_ms = r.long_("segment.ms");
  log.segment_jitter_ms = r.long_("segment.jitter.ms");
  log.segment_index_bytes = r.int_("segment.index.bytes");
  log.index_interval_bytes = r.int_("index.interval.bytes");
  log.retention_ms = r.long_("retention.ms");
  log.retention_bytes = r.long_("retention.bytes");
  log.flush_messages = r.long_("flush.messages");
  log.flush_ms = r.long_("flush.ms");
  log.file_delete_delay_ms = r.long_("file.delete.delay.ms");
  log.message_timestamp_type = r.string("message.timestamp.type") == "LogAppendTime"
                                   ? storage::TimestampType::log_append_time
                                   : storage::TimestampType::create_time;
  const auto policy = r.list("cleanup.policy");
  log.cleanup_delete = std::find(policy.begin(), policy.end(), "delete") != policy.end();
  log.cleanup_compact = std::find(policy.begin(), policy.end(), "compact") != policy.end();
  log.preallocate = r.boolean("preallocate");
  log.delete_retention_ms = r.long_("delete.retention.ms");
  log.min_cleanable_dirty_ratio = r.double_("min.cleanable.dirty.ratio");
  log.min_compaction_lag_ms = r.long_("min.compaction.lag.ms");
  log.max_compaction_lag_ms = r.long_("max.compaction.lag.ms");

  c.max_message_bytes = r.int_("max.message.bytes");
  c.min_insync_replicas = r.int_("min.insync.replicas");
  c.message_timestamp_before_max_ms = r.long_("message.timestamp.before.max.ms");
  c.message_timestamp_after_max_ms = r.long_("message.timestamp.after.max.ms");
  c.compression_type = r.string("compression.type");
  c.compression_gzip_level = r.int_("compression.gzip.level");
  c.compression_lz4_level = r.int_("compression.lz4.level");
  c.compression_zstd_level = r.int_("compression.zstd.level");
  c.unclean_leader_election_enable = r.boolean("unclean.leader.election.enable");
  return c;
}

}  // namespace runnel::broker
