// DescribeConfigs (key 32): the configs of topics, of this broker and of
// its loggers, as Kafka's ConfigHelper reports them. v1 adds synonyms and
// the config source, v3 documentation and the config type, v4 is flexible.
//
// TOPIC: every topic config with its effective value and source.
// BROKER "<this node id>": every broker config, its effective value and
// where it comes from (dynamic for this broker, dynamic cluster default,
// server.properties, Kafka's default); read-only unless Runnel can change
// it at runtime (dynamic_broker_config.h). BROKER "": the cluster-wide
// dynamic defaults that are set. BROKER_LOGGER: the root
// logger's level. An empty or null ConfigurationKeys lists every key;
// unknown requested keys are left out. Types, documentation, read-only
// flags and synonym families come from the config table (config_def.h);
// no key declares documentation yet, so it is null, which Kafka's clients
// accept. DESCRIBE_CONFIGS is required on the topic, or on the cluster for
// BROKER and BROKER_LOGGER (Kafka's codes, no message).
#include <algorithm>
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/config_admin.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Result_ = p::DescribeConfigsResponse::DescribeConfigsResult;
using Entry_ = Result_::DescribeConfigsResourceResult;
using Synonym_ = Entry_::DescribeConfigsSynonym;
using Resource_ = p::DescribeConfigsRequest::DescribeConfigsResource;

struct Options {
  bool synonyms = false;
};

bool wanted(const Resource_& r, const std::string& key) {
  if (!r.configuration_keys || r.configuration_keys->empty()) return true;
  const auto& keys = *r.configuration_keys;
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

Result_ failed(const Resource_& r, ErrorCode code, std::optional<std::string> message) {
  Result_ out;
  out.error_code = p::code(code);
  out.error_message = std::move(message);
  out.resource_type = r.resource_type;
  out.resource_name = r.resource_name;
  return out;
}

Entry_ make_entry(const ConfigEntry& e, const Options& o) {
  Entry_ out;
  out.name = e.name;
  out.value = e.sensitive ? std::nullopt : e.value;
  out.read_only = e.read_only;
  out.config_source = static_cast<int8_t>(e.source);
  out.is_sensitive = e.sensitive;
  if (o.synonyms)
    for (const auto& s : e.synonyms)
      out.synonyms.push_back({s.name, e.sensitive ? std::nullopt : s.value, static_cast<int8_t>(s.source), {}});
  out.config_type = static_cast<int8_t>(e.type);
  out.documentation = e.documentation;
  return out;
}

Result_ describe_topic(Broker& b, const Resource_& r, const Options& o) {
  if (auto e = TopicTable::validate_name(r.resource_name); !e.ok()) return failed(r, e.code, e.message);
  auto topic = b.topics().find(r.resource_name);
  if (!topic) return failed(r, ErrorCode::unknown_topic_or_partition, std::nullopt);
  Result_ out = failed(r, ErrorCode::none, std::nullopt);
  for (const auto& e : describe_topic_configs(b.config(), topic->overrides))
    if (wanted(r, e.name)) out.configs.push_back(make_entry(e, o));
  return out;
}

// One broker config as Kafka's ConfigHelper describes it: the synonyms are
// the values of the key's synonym family by layer, starting from the first
// that names the key itself. For BROKER "" (per_broker false) the value is
// the cluster default's, and this broker's own layer is left out.
ConfigEntry broker_entry(const BrokerConfig& config, const ConfigKey& def, bool per_broker) {
  ConfigEntry e;
  e.name = def.name;
  e.value = per_broker ? config.value_or_default(def.name) : config.layer_value(ConfigLayer::dynamic_default, def.name);
  e.type = data_type(def.type);
  if (def.documentation) e.documentation = def.documentation;
  e.sensitive = def.type == ConfigType::password;
  e.read_only = !is_dynamic_broker_config(def.name);
  auto all = broker_synonyms(config, broker_config_synonyms(def.name));
  if (!per_broker) std::erase_if(all, [](const auto& s) { return s.source == ConfigSource::dynamic_broker_config; });
  auto first_own = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == e.name; });
  e.synonyms.assign(first_own, all.end());
  e.source = e.synonyms.empty() ? ConfigSource::default_config : e.synonyms.front().source;
  return e;
}

ConfigEntry listener_entry(const BrokerConfig& config, const std::string& name) {
  const ConfigKey& base = *listener_override_key(name);
  ConfigEntry e;
  e.name = name;
  e.value = config.get_optional(name);
  e.type = data_type(base.type);
  e.sensitive = base.type == ConfigType::password;
  e.read_only = !is_dynamic_broker_config(name);
  auto all = broker_synonyms(config, {name, base.name});
  e.source = all.empty() ? ConfigSource::default_config : all.front().source;
  e.synonyms = std::move(all);
  return e;
}

Result_ describe_broker(Broker& b, const Resource_& r, const Options& o) {
  Result_ out = failed(r, ErrorCode::none, std::nullopt);
  if (r.resource_name.empty()) {
    for (const auto& [name, value] : b.config().dynamic_configs(ConfigLayer::dynamic_default))
      if (wanted(r, name)) out.configs.push_back(make_entry(broker_entry(b.config(), *find_broker_key(name), false), o));
    return out;
  }
  auto id = parse_java_int(r.resource_name);
  if (!id) return failed(r, ErrorCode::invalid_request, "Broker id must be an integer, but it is: " + r.resource_name);
  if (*id != b.node_id())
    return failed(r, ErrorCode::invalid_request,
                  "Unexpected broker id, expected " + std::to_string(b.node_id()) + " or empty string, but received " +
                      r.resource_name);
  for (const auto& def : broker_config_keys())
    if (wanted(r, def.name)) out.configs.push_back(make_entry(broker_entry(b.config(), def, true), o));
  // Kafka lists each per-listener key set (listener.name.<l>.ssl.keystore.location,
  // ...) as a config of its own, its base key as its last synonym.
  for (const auto& name : b.config().listener_override_names())
    if (wanted(r, name)) out.configs.push_back(make_entry(listener_entry(b.config(), name), o));
  return out;
}

std::string root_log_level() {
  if (log_enabled(LogLevel::debug)) return "DEBUG";
  if (log_enabled(LogLevel::info)) return "INFO";
  if (log_enabled(LogLevel::warn)) return "WARN";
  return "ERROR";
}

Result_ describe_broker_logger(Broker& b, const Resource_& r) {
  if (r.resource_name.empty()) return failed(r, ErrorCode::invalid_request, "Broker id must not be empty");
  auto id = parse_java_int(r.resource_name);
  if (!id) return failed(r, ErrorCode::invalid_request, "Broker id must be an integer, but it is: " + r.resource_name);
  if (*id != b.node_id())
    return failed(r, ErrorCode::invalid_request,
                  "Unexpected broker id, expected " + std::to_string(b.node_id()) + " but received " + r.resource_name);
  Result_ out = failed(r, ErrorCode::none, std::nullopt);
  // Runnel has one logger, the root.
  if (wanted(r, "root")) {
    Entry_ e;
    e.name = "root";
    e.value = root_log_level();
    e.config_source = static_cast<int8_t>(ConfigSource::dynamic_broker_logger_config);
    e.config_type = static_cast<int8_t>(ConfigDataType::unknown);
    e.documentation = std::nullopt;
    out.configs.push_back(std::move(e));
  }
  return out;
}

}  // namespace

template <>
awaitable<p::DescribeConfigsResponse> handle<p::DescribeConfigsApi>(RequestContext& ctx, p::DescribeConfigsRequest& req) {
  Broker& b = ctx.broker;
  p::DescribeConfigsResponse resp;
  const Options o{req.include_synonyms};
  // An unknown resource type fails the whole request in Kafka (thrown
  // while authorizing), answered with INVALID_REQUEST's default message.
  for (const auto& r : req.resources) {
    if (is_known_resource_type(r.resource_type)) continue;
    for (const auto& each : req.resources)
      resp.results.push_back(failed(each, ErrorCode::invalid_request,
                                    "This most likely occurs because of a request being malformed by the client library "
                                    "or the message was sent to an incompatible broker. See the broker logs for more details."));
    co_return resp;
  }
  for (const auto& r : req.resources) {
    if (auto refused = config_refusal(ctx, r.resource_type, r.resource_name, AclOperation::describe_configs);
        refused != ErrorCode::none) {
      resp.results.push_back(failed(r, refused, std::nullopt));
      continue;
    }
    switch (static_cast<ConfigResourceType>(r.resource_type)) {
      case ConfigResourceType::topic: resp.results.push_back(describe_topic(b, r, o)); break;
      case ConfigResourceType::broker: resp.results.push_back(describe_broker(b, r, o)); break;
      case ConfigResourceType::broker_logger: resp.results.push_back(describe_broker_logger(b, r)); break;
      default:
        // GROUP and CLIENT_METRICS configs are not implemented yet.
        resp.results.push_back(failed(r, ErrorCode::invalid_request,
                                      std::string("Unsupported resource type: ") + resource_type_name(r.resource_type)));
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
