// IncrementalAlterConfigs (key 44, KIP-339): SET, DELETE, APPEND and
// SUBTRACT single config entries of topics, of this broker, and of its
// loggers (KIP-412). v1 is flexible; the fields are the same.
//
// TOPIC: the operations are applied to the topic's overrides (APPEND and
// SUBTRACT only on list configs such as cleanup.policy, starting from the
// config's default when unset), the result is validated as Kafka's
// controller does, and unless ValidateOnly it is stored and applied to the
// partition logs. BROKER "<id>" / BROKER "": the operations edit this
// broker's / the cluster-wide dynamic configs (the topic defaults Kafka
// lets change at runtime, dynamic_broker_config.h); the result must hold
// only dynamic keys with valid values; unless ValidateOnly it is stored and
// applied to every partition log. BROKER_LOGGER:
// the root logger's level (DEBUG, INFO, WARN, ERROR); not persisted, as in
// Kafka. Results come back in request order.
#include <map>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/config_admin.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Resource_ = p::IncrementalAlterConfigsRequest::AlterConfigsResource;

std::vector<ConfigChange> changes_of(const Resource_& r) {
  std::vector<ConfigChange> out;
  for (const auto& c : r.configs) out.push_back({c.name, c.config_operation, c.value});
  return out;
}

std::optional<LogLevel> parse_level(const std::string& s) {
  if (s == "DEBUG") return LogLevel::debug;
  if (s == "INFO") return LogLevel::info;
  if (s == "WARN") return LogLevel::warn;
  if (s == "ERROR") return LogLevel::error;
  return std::nullopt;
}

// Kafka's RuntimeLoggerManager, for Runnel's one logger, "root".
TopicError alter_loggers(const Resource_& r, int32_t node_id, bool validate_only) {
  auto id = parse_java_int(r.resource_name);
  if (!id) return {ErrorCode::invalid_request, "Node id must be an integer, but it is: " + r.resource_name};
  if (*id != node_id)
    return {ErrorCode::invalid_request,
            "Unexpected node id. Expected " + std::to_string(node_id) + ", but received " + r.resource_name};
  std::optional<LogLevel> level;
  std::string level_name;
  for (const auto& c : r.configs) {
    switch (static_cast<AlterConfigOp>(c.config_operation)) {
      case AlterConfigOp::set:
        if (c.name != "root") return {ErrorCode::invalid_config, "Logger " + c.name + " does not exist!"};
        level = parse_level(*c.value);
        level_name = *c.value;
        if (!level)
          return {ErrorCode::invalid_config, "Cannot set the log level of " + c.name + " to " + *c.value +
                                                 " as it is not a supported log level. Valid log4j levels are DEBUG, INFO, WARN, ERROR"};
        break;
      case AlterConfigOp::remove:
        if (c.name != "root") return {ErrorCode::invalid_config, "Logger " + c.name + " does not exist!"};
        return {ErrorCode::invalid_request, "Removing the log level of the root logger is not allowed"};
      case AlterConfigOp::append: return {ErrorCode::invalid_request, "APPEND operation is not allowed for the BROKER_LOGGER resource"};
      case AlterConfigOp::subtract:
        return {ErrorCode::invalid_request, "SUBTRACT operation is not allowed for the BROKER_LOGGER resource"};
      default:
        return {ErrorCode::invalid_request, "Unknown operation type " + std::to_string(c.config_operation) +
                                                " is not allowed for the BROKER_LOGGER resource"};
    }
  }
  if (level && !validate_only) {
    set_log_level(*level);
    RLOG_INFO("root log level set to %s", level_name.c_str());
  }
  return {};
}

awaitable<TopicError> alter_one(const RequestContext& ctx, const Resource_& r, bool validate_only) {
  Broker& b = ctx.broker;
  // Kafka: ALTER_CONFIGS on the topic, or on the cluster for BROKER and BROKER_LOGGER.
  if (auto refused = config_refusal(ctx, r.resource_type, r.resource_name, AclOperation::alter_configs);
      refused != ErrorCode::none)
    co_return TopicError{refused, {}};
  auto changes = changes_of(r);
  if (auto e = check_changes(changes, /*incremental=*/true); !e.ok()) co_return e;
  switch (static_cast<ConfigResourceType>(r.resource_type)) {
    case ConfigResourceType::broker_logger: co_return alter_loggers(r, b.node_id(), validate_only);
    case ConfigResourceType::broker: {
      const ConfigLayer layer = broker_resource_layer(r.resource_name);
      DynamicConfigs configs;
      if (auto e = alter_broker_configs(r.resource_name, b.node_id(), changes, b.config().dynamic_configs(layer), configs);
          !e.ok())
        co_return e;
      co_return co_await b.set_dynamic_configs(layer, std::move(configs), validate_only);
    }
    case ConfigResourceType::topic: {
      TopicOverrides overrides;
      if (auto e = incremental_topic_overrides(b.topics(), r.resource_name, changes, overrides); !e.ok()) co_return e;
      if (validate_only) co_return TopicError{};
      co_return co_await b.topic_frontend().set_overrides(r.resource_name, std::move(overrides));
    }
    case ConfigResourceType::group:
    case ConfigResourceType::client_metrics:
      co_return TopicError{ErrorCode::invalid_request, std::string("Unsupported resource type: ") + resource_type_name(r.resource_type)};
    default: co_return TopicError{ErrorCode::invalid_request, "Unknown resource type " + std::to_string(r.resource_type)};
  }
}

}  // namespace

template <>
awaitable<p::IncrementalAlterConfigsResponse> handle<p::IncrementalAlterConfigsApi>(RequestContext& ctx, p::IncrementalAlterConfigsRequest& req) {
  // Built before the co_await: GCC 12 miscompiles a capturing lambda inside one.
  auto one = [&](const auto& r) { return alter_one(ctx, r, req.validate_only); };
  co_return co_await answer_each_resource<p::IncrementalAlterConfigsResponse>(req.resources, one);
}

}  // namespace runnel::broker
