// AlterConfigs (key 33): the legacy, non-incremental alteration. Each
// resource's configs replace its whole set of dynamic configs: a topic
// override not named in the request is removed. v1 changes only
// throttling, v2 is flexible.
//
// TOPIC: the new set is validated as Kafka's controller does and, unless
// ValidateOnly, stored and applied to the partition logs. BROKER "<id>" /
// BROKER "": the named configs become this broker's / the cluster-wide
// dynamic configs (dynamic_broker_config.h), replacing the previous set.
// BROKER_LOGGER is not alterable through this API, as in Kafka.
// ALTER_CONFIGS is required on the topic, or on the cluster for BROKER.
#include <map>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/config_admin.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Resource_ = p::AlterConfigsRequest::AlterConfigsResource;

awaitable<TopicError> alter_one(const RequestContext& ctx, const Resource_& r, bool validate_only) {
  Broker& b = ctx.broker;
  if (auto refused = config_refusal(ctx, r.resource_type, r.resource_name, AclOperation::alter_configs);
      refused != ErrorCode::none)
    co_return TopicError{refused, {}};
  std::vector<ConfigChange> changes;
  for (const auto& c : r.configs)
    changes.push_back({c.name, static_cast<int8_t>(AlterConfigOp::set), c.value});
  if (auto e = check_changes(changes, /*incremental=*/false); !e.ok()) co_return e;
  switch (static_cast<ConfigResourceType>(r.resource_type)) {
    case ConfigResourceType::broker: {
      DynamicConfigs configs;
      if (auto e = alter_broker_configs(r.resource_name, b.node_id(), changes, {}, configs); !e.ok()) co_return e;
      co_return co_await b.set_dynamic_configs(broker_resource_layer(r.resource_name), std::move(configs), validate_only);
    }
    case ConfigResourceType::topic: {
      TopicOverrides overrides;
      for (const auto& c : r.configs) overrides[c.name] = *c.value;
      if (auto e = check_topic_overrides(b.topics(), r.resource_name, overrides); !e.ok()) co_return e;
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
awaitable<p::AlterConfigsResponse> handle<p::AlterConfigsApi>(RequestContext& ctx, p::AlterConfigsRequest& req) {
  // Built before the co_await: GCC 12 miscompiles a capturing lambda inside one.
  auto one = [&](const auto& r) { return alter_one(ctx, r, req.validate_only); };
  co_return co_await answer_each_resource<p::AlterConfigsResponse>(req.resources, one);
}

}  // namespace runnel::broker
