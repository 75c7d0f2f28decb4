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
  const ConfigKey* key = find_broker_key(name);
  return key && key->update != DynamicUpdate::read_only;
}

TopicError check_dynamic_configs(const DynamicConfigs& configs) {
  std::vector<std::string> fixed;
  for (const auto& [k, v] : configs)
    if (!is_dynamic_broker_config(k)) fixed.push_back(k);
  if (!fixed.empty()) {
    std::string names;
    for (const auto& n : fixed) names += (names.empty() ? "" : ", ") + n;
    return {ErrorCode::invalid_request, "Cannot update these configs dynamically: Set(" + names + ")"};
  }
  for (const auto& [k, v] : configs) {
    if (auto err = invalid_value_message(*find_broker_key(k), v); !err.empty()) return {ErrorCode::invalid_config, err};
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
      if (auto e = check_dynamic_configs({{k, v}}); !e.ok()) {
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
