#include "broker/dynamic_broker_config.h"

#include <algorithm>
#include <boost/json.hpp>
#include <filesystem>

#include "broker/logging.h"
#include "broker/topic_config.h"
#include "protocol/error_codes.h"
#include "storage/io.h"

namespace runnel::broker {

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;
using protocol::ErrorCode;

constexpr const char* kFile = "runnel-broker-configs.json";
// JSON member names of the two layers.
constexpr const char* kBrokerLayer = "broker";
constexpr const char* kDefaultLayer = "cluster_default";

fs::path file_of(const BrokerConfig& config) { return fs::path(config.log_dirs().front()) / kFile; }

DynamicConfigs read_layer(const json::object& doc, const char* name) {
  DynamicConfigs out;
  if (auto* layer = doc.if_contains(name); layer && layer->is_object())
    for (const auto& [k, v] : layer->as_object())
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

void load_dynamic_configs(BrokerConfig& config) {
  fs::path file = file_of(config);
  if (!fs::exists(file)) return;
  auto text = storage::read_whole_file(file);
  boost::system::error_code ec;
  json::value doc = text ? json::parse(*text, ec) : json::value();
  if (!text || ec || !doc.is_object()) {
    RLOG_WARN("ignoring unreadable dynamic broker configs in %s", file.c_str());
    return;
  }
  for (auto [layer, name] : {std::pair{ConfigLayer::dynamic_broker, kBrokerLayer},
                             std::pair{ConfigLayer::dynamic_default, kDefaultLayer}}) {
    DynamicConfigs kept;
    for (const auto& [k, v] : read_layer(doc.as_object(), name)) {
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

std::error_code save_dynamic_configs(const BrokerConfig& config) {
  json::object doc;
  for (auto [layer, name] : {std::pair{ConfigLayer::dynamic_broker, kBrokerLayer},
                             std::pair{ConfigLayer::dynamic_default, kDefaultLayer}}) {
    json::object o;
    for (const auto& [k, v] : config.dynamic_configs(layer)) o[k] = v;
    doc[name] = std::move(o);
  }
  return storage::write_file_atomically(file_of(config), json::serialize(doc) + "\n");
}

}  // namespace runnel::broker
