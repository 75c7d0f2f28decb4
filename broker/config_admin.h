// What DescribeConfigs, AlterConfigs and IncrementalAlterConfigs share:
// config resource types, the broker-id checks Kafka makes on resource
// names, and the computation of a topic's new overrides (Kafka's
// ConfigAdminManager on the broker plus ConfigurationControlManager and
// ControllerConfigurationValidator on the controller, folded into one node).
//
// BROKER resources alter Kafka's dynamic broker configs
// (dynamic_broker_config.h): BROKER "<node id>" this broker's layer,
// BROKER "" the cluster-wide default layer.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "broker/asio.h"
#include "broker/dynamic_broker_config.h"
#include "broker/topic_table.h"

namespace runnel::broker {

// ConfigResource.Type ids.
enum class ConfigResourceType : int8_t {
  unknown = 0, topic = 2, broker = 4, broker_logger = 8, client_metrics = 16, group = 32,
};

// Kafka's enum name of a resource type id ("TOPIC", ... "UNKNOWN").
const char* resource_type_name(int8_t id);
bool is_known_resource_type(int8_t id);

// Java's Integer.parseInt: optional sign, decimal digits, int32 range.
std::optional<int32_t> parse_java_int(const std::string& s);

// Java's String.split(","): trailing empty strings are dropped.
std::vector<std::string> split_list(const std::string& s);

// AlterConfigOp.OpType ids.
enum class AlterConfigOp : int8_t { set = 0, remove = 1, append = 2, subtract = 3 };

struct ConfigChange {
  std::string name;
  int8_t op = 0;
  std::optional<std::string> value;
};

// The checks Kafka's broker makes on every resource's changes before
// looking at its type: no key twice, and no null value (except for an
// incremental DELETE).
TopicError check_changes(const std::vector<ConfigChange>& changes, bool incremental);

// The dynamic layer a BROKER resource name addresses: "" the cluster-wide
// default, anything else this broker (the name is checked by
// alter_broker_configs).
ConfigLayer broker_resource_layer(const std::string& resource_name);

// A BROKER resource's alteration: the resource name must be "" or this
// node's id; the changes are applied to `current` (the layer's dynamic
// configs; empty for AlterConfigs, which replaces the whole set) and the
// result is checked as Kafka checks it. On success `out` is the new set.
TopicError alter_broker_configs(const std::string& resource_name, int32_t node_id,
                                const std::vector<ConfigChange>& changes, const DynamicConfigs& current,
                                DynamicConfigs& out);

// A TOPIC resource's incremental alteration: applies the changes to the
// topic's current overrides and validates the result as Kafka's controller
// does. On success `out` holds the new overrides.
TopicError incremental_topic_overrides(const TopicTable& topics, const std::string& topic,
                                       const std::vector<ConfigChange>& changes, TopicOverrides& out);

// Validates a topic's complete new overrides (name, keys, values, size,
// then existence), as Kafka's controller does before writing them.
TopicError check_topic_overrides(const TopicTable& topics, const std::string& topic, const TopicOverrides& overrides);

// AlterConfigs and IncrementalAlterConfigs answer alike: one result per
// resource, INVALID_REQUEST for a resource named twice, otherwise what
// `alter_one(resource)` (an awaitable, which may persist) returns, one
// resource after the other. `Response` is the generated response type.
template <typename Response, typename Resources, typename AlterOne>
awaitable<Response> answer_each_resource(const Resources& resources, AlterOne& alter_one) {
  Response resp;
  std::map<std::pair<int8_t, std::string>, int> counts;
  for (const auto& r : resources) ++counts[{r.resource_type, r.resource_name}];
  for (const auto& r : resources) {
    TopicError err{protocol::ErrorCode::invalid_request, "Each resource must appear at most once."};
    if (counts[{r.resource_type, r.resource_name}] == 1) err = co_await alter_one(r);
    auto& out = resp.responses.emplace_back();
    out.error_code = protocol::code(err.code);
    out.error_message = err.ok() || err.message.empty() ? std::nullopt : std::optional<std::string>(err.message);
    out.resource_type = r.resource_type;
    out.resource_name = r.resource_name;
  }
  co_return resp;
}

}  // namespace runnel::broker
