#include "broker/dynamic_broker_config.h"

#include <algorithm>
#include <boost/json.hpp>
#include <tuple>

#include "broker/logging.h"
#include "broker/topic_config.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

namespace json = boost::json;
using protocol::ErrorCode;

// The two layers, as the log names them.
constexpr const char* kBrokerLayer = "broker";
constexpr const char* kDefaultLayer = "cluster_default";

DynamicConfigs read_layer(const json::object& layer) {
  DynamicConfigs out;
  for (const auto& [k, v] : layer)
    if (v.is_string()) out[std::string(k)] = std::string(v.as_string());
  return out;
}

}  // namespace

bool is_dynamic_broker_config(const std::string& name) {
  if (const ConfigKey* base = listener_override_key(name)) return base->update == DynamicUpdate::per_listener;
  const ConfigKey* key = find_broker_key(name);
  return key && key->update != DynamicUpdate::read_only;
}

namespace {

// Kafka prints the offending names as a Scala Set.
TopicError refused(const char* why, const std::vector<std::string>& names) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  return {ErrorCode::invalid_request, std::string(why) + ": Set(" + list + ")"};
}

template <typename Pred>
std::vector<std::string> names_where(const DynamicConfigs& configs, Pred pred) {
  std::vector<std::string> out;
  for (const auto& [k, v] : configs)
    if (pred(k)) out.push_back(k);
  return out;
}

}  // namespace

// Kafka's DynamicBrokerConfig.validateConfigs, in its order.
TopicError check_dynamic_configs(const DynamicConfigs& configs, ConfigLayer layer) {
  if (auto fixed = names_where(configs, [](const std::string& k) { return !is_dynamic_broker_config(k); }); !fixed.empty())
    return refused("Cannot update these configs dynamically", fixed);
  auto unprefixed = names_where(configs, [](const std::string& k) {
    const ConfigKey* key = find_broker_key(k);
    return key && key->update == DynamicUpdate::per_listener;
  });
  if (!unprefixed.empty())
    return refused("These security configs can be dynamically updated only per-listener using the listener prefix",
                   unprefixed);
  for (const auto& [k, v] : configs) {
    const ConfigKey* key = listener_override_key(k);
    if (!key) key = find_broker_key(k);
    if (auto err = invalid_value_message(*key, v); !err.empty()) return {ErrorCode::invalid_config, err};
  }
  if (layer == ConfigLayer::dynamic_default) {
    auto per_broker = names_where(configs, [](const std::string& k) { return listener_override_key(k) != nullptr; });
    if (!per_broker.empty())
      return refused("Cannot update these configs at default cluster level, broker id must be specified", per_broker);
  }
  return {};
}

void load_dynamic_configs(BrokerConfig& config, const std::optional<std::string>& broker_layer,
                          const std::optional<std::string>& default_layer) {
  for (auto [layer, name, text] : {std::tuple{ConfigLayer::dynamic_broker, kBrokerLayer, &broker_layer},
                                   std::tuple{ConfigLayer::dynamic_default, kDefaultLayer, &default_layer}}) {
    if (!*text) continue;
    boost::system::error_code ec;
    json::value doc = json::parse(**text, ec);
    if (ec || !doc.is_object()) {
      RLOG_WARN("ignoring unreadable dynamic broker configs (%s)", name);
      continue;
    }
    DynamicConfigs kept;
    for (const auto& [k, v] : read_layer(doc.as_object())) {
      if (auto e = check_dynamic_configs({{k, v}}, layer); !e.ok()) {
        RLOG_WARN("ignoring dynamic broker config %s=%s: %s", k.c_str(), v.c_str(), e.message.c_str());
        continue;
      }
      kept[k] = v;
    }
    if (!kept.empty()) RLOG_INFO("%zu dynamic broker configs (%s) loaded", kept.size(), name);
    config.set_dynamic_configs(layer, std::move(kept));
  }
}

std::string dynamic_configs_value(const BrokerConfig& config, ConfigLayer layer) {
  json::object o;
  for (const auto& [k, v] : config.dynamic_configs(layer)) o[k] = v;
  return json::serialize(o);
}

}  // namespace runnel::broker
