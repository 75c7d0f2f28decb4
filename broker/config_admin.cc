#include "broker/config_admin.h"

#include <algorithm>
#include <set>

namespace runnel::broker {

using protocol::ErrorCode;

namespace {

// Kafka's controller refuses config values longer than a metadata record
// string can hold.
constexpr size_t kMaxConfigValueSize = 32767;

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// A list value split into its non-empty parts (Kafka's getParts), or the
// definition's default when the key has no value.
std::vector<std::string> list_parts(const std::optional<std::string>& value, const char* default_value) {
  std::vector<std::string> parts;
  std::optional<std::string> v = value;
  if (!v && default_value) v = default_value;
  if (!v) return parts;
  for (auto& p : split_list(*v))
    if (!p.empty()) parts.push_back(p);
  return parts;
}

// APPEND adds each of `values` not already there, SUBTRACT removes each
// that is; the result joined back into a list value.
std::string edit_list(std::vector<std::string> parts, const std::string& values, bool append) {
  for (const auto& v : split_list(values)) {
    auto found = std::find(parts.begin(), parts.end(), v);
    if (append && found == parts.end()) parts.push_back(v);
    if (!append && found != parts.end()) parts.erase(found);
  }
  return join(parts, ",");
}

}  // namespace

const char* resource_type_name(int8_t id) {
  switch (static_cast<ConfigResourceType>(id)) {
    case ConfigResourceType::topic: return "TOPIC";
    case ConfigResourceType::broker: return "BROKER";
    case ConfigResourceType::broker_logger: return "BROKER_LOGGER";
    case ConfigResourceType::client_metrics: return "CLIENT_METRICS";
    case ConfigResourceType::group: return "GROUP";
    default: return "UNKNOWN";
  }
}

bool is_known_resource_type(int8_t id) { return std::string(resource_type_name(id)) != "UNKNOWN"; }

std::optional<int32_t> parse_java_int(const std::string& s) {
  size_t i = 0;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
    if (v > int64_t{INT32_MAX} + 1) return std::nullopt;
  }
  if (negative) v = -v;
  if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(v);
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t comma = s.find(',', start);
    parts.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  while (!parts.empty() && parts.back().empty()) parts.pop_back();
  return parts;
}

TopicError check_changes(const std::vector<ConfigChange>& changes, bool incremental) {
  std::set<std::string> seen;
  for (const auto& c : changes)
    if (!seen.insert(c.name).second) return {ErrorCode::invalid_request, "Error due to duplicate config keys"};
  std::vector<std::string> nulls;
  for (const auto& c : changes)
    if (!c.value && !(incremental && c.op == static_cast<int8_t>(AlterConfigOp::remove))) nulls.push_back(c.name);
  if (!nulls.empty()) return {ErrorCode::invalid_request, "Null value not supported for : " + join(nulls, ", ")};
  return {};
}

ConfigLayer broker_resource_layer(const std::string& resource_name) {
  return resource_name.empty() ? ConfigLayer::dynamic_default : ConfigLayer::dynamic_broker;
}

TopicError alter_broker_configs(const std::string& resource_name, int32_t node_id,
                                const std::vector<ConfigChange>& changes, const DynamicConfigs& current,
                                DynamicConfigs& out) {
  if (!resource_name.empty()) {
    auto id = parse_java_int(resource_name);
    if (!id) return {ErrorCode::invalid_request, "Node id must be an integer, but it is: " + resource_name};
    if (*id != node_id)
      return {ErrorCode::invalid_request,
              "Unexpected broker id, expected " + std::to_string(node_id) + ", but received " + resource_name};
  }
  out = current;
  for (const auto& c : changes) {
    switch (static_cast<AlterConfigOp>(c.op)) {
      case AlterConfigOp::set: out[c.name] = *c.value; break;
      case AlterConfigOp::remove: out.erase(c.name); break;
      case AlterConfigOp::append:
      case AlterConfigOp::subtract: {
        const ConfigKey* def = find_broker_key(c.name);
        // Kafka looks the key up in a Scala map that throws for an unknown
        // key, which reaches the client as an unknown server error.
        if (!def) return {ErrorCode::unknown_server_error, ""};
        const bool append = c.op == static_cast<int8_t>(AlterConfigOp::append);
        if (def->type != ConfigType::list)
          return {ErrorCode::invalid_config, std::string("Config value ") + (append ? "append" : "subtract") +
                                                 " is not allowed for config key: " + c.name};
        // The layer's value, else Kafka's default, is what the op edits.
        auto it = out.find(c.name);
        out[c.name] = edit_list(split_list(it != out.end() ? it->second : def->default_value ? def->default_value : ""),
                                *c.value, append);
        break;
      }
      default: return {ErrorCode::invalid_request, "Unknown operations type " + std::to_string(c.op)};
    }
  }
  return check_dynamic_configs(out, broker_resource_layer(resource_name));
}

TopicError check_topic_overrides(const TopicTable& topics, const std::string& topic, const TopicOverrides& overrides) {
  if (topic.empty()) return {ErrorCode::invalid_request, "Default topic resources are not allowed."};
  if (auto e = TopicTable::validate_name(topic); !e.ok()) return e;
  for (const auto& [k, v] : overrides)
    if (!find_topic_key(k)) return {ErrorCode::invalid_config, "Unknown topic config name: " + k};
  for (const auto& [k, v] : overrides) {
    if (v.size() > kMaxConfigValueSize)
      return {ErrorCode::invalid_config, "The configuration value cannot be added because it exceeds the maximum value size of " +
                                             std::to_string(kMaxConfigValueSize) + " bytes."};
    if (auto err = validate_topic_config(k, v); !err.empty()) return {ErrorCode::invalid_config, err};
  }
  if (!topics.find(topic))
    return {ErrorCode::unknown_topic_or_partition, "The topic '" + topic + "' does not exist."};
  return {};
}

TopicError incremental_topic_overrides(const TopicTable& topics, const std::string& topic,
                                       const std::vector<ConfigChange>& changes, TopicOverrides& out) {
  for (const auto& c : changes)
    if (c.op < 0 || c.op > 3) return {ErrorCode::invalid_request, "Unknown operations type " + std::to_string(c.op)};
  auto t = topics.find(topic);
  out = t ? t->overrides : TopicOverrides{};
  for (const auto& c : changes) {
    auto it = out.find(c.name);
    std::optional<std::string> current = it == out.end() ? std::nullopt : std::optional<std::string>(it->second);
    switch (static_cast<AlterConfigOp>(c.op)) {
      case AlterConfigOp::set: out[c.name] = *c.value; break;
      case AlterConfigOp::remove: out.erase(c.name); break;
      case AlterConfigOp::append:
      case AlterConfigOp::subtract: {
        const ConfigKey* def = find_topic_key(c.name);
        const char* op = c.op == static_cast<int8_t>(AlterConfigOp::append) ? "APPEND" : "SUBTRACT";
        if (!def || def->type != ConfigType::list)
          return {ErrorCode::invalid_config, std::string("Can't ") + op + " to key " + c.name + " because its type is not LIST."};
        out[c.name] = edit_list(list_parts(current, def->default_value), *c.value,
                                c.op == static_cast<int8_t>(AlterConfigOp::append));
        break;
      }
    }
  }
  return check_topic_overrides(topics, topic, out);
}

}  // namespace runnel::broker
