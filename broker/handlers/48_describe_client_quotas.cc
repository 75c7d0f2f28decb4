// DescribeClientQuotas (key 48): the client quotas whose entities match a
// filter, as Kafka's KafkaApis and ClientQuotasImage.describe answer, from
// the quotas AlterClientQuotas stored (broker/quota_managers.h). Each
// component matches its entity type by exact name, as the default entity,
// or as any entity of the type; a strict filter matches only entities with
// no other types, and an empty non-strict one matches every entity.
// kafka-configs --describe --entity-type users|clients|ips asks this (and,
// for users, before it lists their SCRAM credentials). DESCRIBE_CONFIGS on
// the cluster is required (CLUSTER_AUTHORIZATION_FAILED); a filter Kafka
// refuses is refused with its error and message.
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/quota_managers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

// Kafka's ClientQuotaFilterComponent match types.
constexpr int8_t kMatchExact = 0;
constexpr int8_t kMatchDefault = 1;
constexpr int8_t kMatchSpecified = 2;

struct Refusal {
  p::ErrorCode code;
  std::string message;
};

std::optional<Refusal> invalid_filter(const p::DescribeClientQuotasRequest& req) {
  std::set<std::string> seen;
  for (const auto& c : req.components) {
    const std::string& type = c.entity_type;
    if (type.empty()) return Refusal{p::ErrorCode::invalid_request, "Invalid empty entity type."};
    if (!seen.insert(type).second)
      return Refusal{p::ErrorCode::invalid_request, "Entity type " + type + " cannot appear more than once in the filter."};
    if (type != "ip" && type != "user" && type != "client-id")
      return Refusal{p::ErrorCode::unsupported_version, "Unsupported entity type " + type};
    if (c.match_type == kMatchExact && !c.match)
      return Refusal{p::ErrorCode::invalid_request, "Request specified MATCH_TYPE_EXACT, but set match string to null."};
    if (c.match_type == kMatchDefault && c.match)
      return Refusal{p::ErrorCode::invalid_request,
                     "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."};
    if (c.match_type == kMatchSpecified && c.match)
      return Refusal{p::ErrorCode::invalid_request,
                     "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."};
    if (c.match_type != kMatchExact && c.match_type != kMatchDefault && c.match_type != kMatchSpecified)
      return Refusal{p::ErrorCode::invalid_request, "Unknown match type " + std::to_string(c.match_type)};
  }
  if (seen.count("ip") && (seen.count("user") || seen.count("client-id")))
    return Refusal{p::ErrorCode::invalid_request,
                   "Invalid entity filter component combination. IP filter component should not be used with user "
                   "or clientId filter component."};
  return std::nullopt;
}

// Kafka's ClientQuotasImage.matches.
bool matches(const ClientQuotaEntity& entity, const p::DescribeClientQuotasRequest& req) {
  if (req.strict && entity.size() != req.components.size()) return false;
  for (const auto& c : req.components) {
    auto it = entity.find(c.entity_type);
    if (it == entity.end()) return false;
    if (c.match_type == kMatchExact && it->second != c.match) return false;
    if (c.match_type == kMatchDefault && it->second) return false;
  }
  return true;
}

}  // namespace

template <>
awaitable<p::DescribeClientQuotasResponse> handle<p::DescribeClientQuotasApi>(RequestContext& ctx,
                                                                             p::DescribeClientQuotasRequest& req) {
  p::DescribeClientQuotasResponse resp;
  // Kafka's getErrorResponse: the error, its message (none that only
  // repeats the error's), and no entries.
  auto fail = [&resp](p::ErrorCode code, std::optional<std::string> message) {
    resp.error_code = p::code(code);
    resp.error_message = std::move(message);
    resp.entries = std::nullopt;
    return resp;
  };
  if (!authorized_on_cluster(ctx, AclOperation::describe_configs))
    co_return fail(p::ErrorCode::cluster_authorization_failed, std::nullopt);
  if (auto why = invalid_filter(req)) co_return fail(why->code, why->message);
  auto& entries = resp.entries.emplace();
  for (const auto& [entity, values] : ctx.broker.quotas().quotas()) {
    if (!matches(entity, req)) continue;
    auto& entry = entries.emplace_back();
    for (const auto& [type, name] : entity) entry.entity.push_back({type, name, {}});
    for (const auto& [key, value] : values) entry.values.push_back({key, value, {}});
  }
  co_return resp;
}

}  // namespace runnel::broker
