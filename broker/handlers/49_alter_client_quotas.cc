// AlterClientQuotas (key 49): sets and removes client quota values, as
// Kafka's ControllerApis and ClientQuotaControlManager.alterClientQuotas
// answer. ALTER_CONFIGS on the cluster is required (every entity
// CLUSTER_AUTHORIZATION_FAILED). The response has one entry per distinct
// entity, as Kafka's result map does. Each entity is judged alone, and
// INVALID_REQUEST refuses it whole:
//   - a quota key twice in one entity's ops; an entity named twice
//     ("Ignoring duplicate entity", neither alteration applied);
//   - no entity type, a type other than user, client-id and ip, an empty
//     name, or ip beside another type;
//   - a value not above 0, or a key the entity type does not have (user and client-id:
//     producer_byte_rate and consumer_byte_rate, whole numbers,
//     request_percentage and controller_mutation_rate; ip:
//     connection_creation_rate, a whole number), and for ip a name that is
//     neither an address nor a host that resolves.
// The entities that pass are written together in one store write (etcd or
// runnel-client-quotas.json), unless ValidateOnly. Removing a key that is
// not set is no error, as in Kafka.
#include <netdb.h>

#include <cmath>
#include <memory>
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/quota_managers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using Request = p::AlterClientQuotasRequest;
using Response = p::AlterClientQuotasResponse;

struct Refusal {
  p::ErrorCode code = p::ErrorCode::invalid_request;
  std::string message;
};

enum class KeyType { long_value, double_value, int_value };

// Kafka's QuotaConfig user/client-id and ip config definitions.
std::optional<KeyType> key_type(const ClientQuotaEntity& entity, const std::string& key) {
  if (entity.count(kIpEntity)) {
    if (key == kConnectionCreationRate) return KeyType::int_value;
    return std::nullopt;
  }
  if (key == kProducerByteRate || key == kConsumerByteRate) return KeyType::long_value;
  if (key == kRequestPercentage || key == kControllerMutationRate) return KeyType::double_value;
  return std::nullopt;
}

// What Kafka's InetAddress.getByName accepts: an address, or (when not
// `numeric_only`) a host name that resolves, which may block: the handler
// asks that on the blocking pool.
bool resolves(const std::string& name, bool numeric_only) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  if (numeric_only) hints.ai_flags = AI_NUMERICHOST;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (found) freeaddrinfo(found);
  return rc == 0;
}

Refusal unresolved_ip(const std::string& name) {
  return Refusal{p::ErrorCode::invalid_request, name + " is not a valid IP or resolvable host."};
}

// One entity's alteration: key -> value, nullopt to remove.
using Ops = std::map<std::string, std::optional<double>>;

std::optional<Refusal> invalid_entity(const ClientQuotaEntity& entity) {
  if (entity.empty()) return Refusal{p::ErrorCode::invalid_request, "Invalid empty client quota entity"};
  for (const auto& [type, name] : entity) {
    if (type != kUserEntity && type != kClientIdEntity && type != kIpEntity)
      return Refusal{p::ErrorCode::invalid_request, "Unhandled client quota entity type: " + type};
    if (name && name->empty()) return Refusal{p::ErrorCode::invalid_request, "Empty " + type + " not supported"};
  }
  if (entity.count(kIpEntity) && entity.size() > 1)
    // Kafka's message, its missing space included.
    return Refusal{p::ErrorCode::invalid_request,
                   "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"};
  return std::nullopt;
}

std::optional<Refusal> invalid_value(const ClientQuotaEntity& entity, const std::string& key, double value) {
  auto type = key_type(entity, key);
  if (!type) return Refusal{p::ErrorCode::invalid_request, "Invalid configuration key " + key};
  if (!(value > 0.0)) return Refusal{p::ErrorCode::invalid_request, "Quota " + key + " must be greater than 0"};
  if (*type == KeyType::double_value) return std::nullopt;
  if (*type == KeyType::int_value && value > INT32_MAX)
    return Refusal{p::ErrorCode::invalid_request, "Proposed value for " + key + " is too large for an INT."};
  if (*type == KeyType::long_value && value > static_cast<double>(INT64_MAX))
    return Refusal{p::ErrorCode::invalid_request, "Proposed value for " + key + " is too large for a LONG."};
  // Kafka's check of a whole-number key: a remainder within 1e-6 passes.
  if (std::abs(std::fmod(value, 1.0)) > 1e-6)
    return Refusal{p::ErrorCode::invalid_request, key + " cannot be a fractional value."};
  return std::nullopt;
}

std::optional<Refusal> invalid_values(const ClientQuotaEntity& entity, const Ops& ops) {
  for (const auto& [key, value] : ops)
    if (value)
      if (auto refusal = invalid_value(entity, key, *value)) return refusal;
  return std::nullopt;
}

struct Judged {
  ClientQuotaEntity entity;
  std::vector<p::AlterClientQuotasResponse::EntryData::EntityData> wire_entity;  // as the request named it
  std::optional<Refusal> refusal;
  Ops ops;
  std::optional<std::string> host_to_resolve;  // an ip entity's name that is not an address
};

// The request's entities in order of first mention, each judged.
std::vector<Judged> judge(const Request& req) {
  std::vector<Judged> out;
  std::map<ClientQuotaEntity, size_t> seen;
  for (const auto& entry : req.entries) {
    ClientQuotaEntity entity;
    // Kafka builds the entity as a map: a type named twice keeps the last name.
    for (const auto& e : entry.entity) entity[e.entity_type] = e.entity_name;
    if (auto it = seen.find(entity); it != seen.end()) {
      out[it->second].refusal = Refusal{p::ErrorCode::invalid_request, "Ignoring duplicate entity " + to_string(entity)};
      continue;
    }
    seen.emplace(entity, out.size());
    Judged& j = out.emplace_back();
    j.entity = entity;
    for (const auto& e : entry.entity) j.wire_entity.push_back({e.entity_type, e.entity_name, {}});
    for (const auto& op : entry.ops) {
      if (j.ops.count(op.key)) {
        j.refusal = Refusal{p::ErrorCode::invalid_request,
                            "Duplicate quota key " + op.key + " not updating quota for this entity " + to_string(entity)};
        break;
      }
      j.ops[op.key] = op.remove ? std::nullopt : std::optional<double>(op.value);
    }
    if (j.refusal) continue;
    if ((j.refusal = invalid_entity(entity))) continue;
    // The values are judged once the entity is: after a host name resolves.
    if (auto ip = entity.find(kIpEntity); ip != entity.end() && ip->second && !resolves(*ip->second, true))
      j.host_to_resolve = ip->second;
    else j.refusal = invalid_values(entity, j.ops);
  }
  return out;
}

void apply_alterations(const std::vector<Judged>& judged, ClientQuotas& stored) {
  for (const auto& j : judged) {
    if (j.refusal) continue;
    for (const auto& [key, value] : j.ops) {
      if (value) stored[j.entity][key] = *value;
      else if (auto it = stored.find(j.entity); it != stored.end()) it->second.erase(key);
    }
  }
}

Response::EntryData result(const Judged& j, p::ErrorCode code, std::optional<std::string> message) {
  Response::EntryData e;
  e.error_code = p::code(code);
  e.error_message = std::move(message);
  e.entity = j.wire_entity;
  return e;
}

}  // namespace

template <>
awaitable<Response> handle<p::AlterClientQuotasApi>(RequestContext& ctx, Request& req) {
  Response resp;
  auto judged = std::make_shared<std::vector<Judged>>(judge(req));
  for (auto& j : *judged) {
    if (j.refusal || !j.host_to_resolve) continue;
    std::function<bool()> lookup = [host = *j.host_to_resolve] { return resolves(host, false); };
    if (!co_await ctx.broker.run_blocking(std::move(lookup))) j.refusal = unresolved_ip(*j.host_to_resolve);
    else j.refusal = invalid_values(j.entity, j.ops);
  }
  if (!authorized_on_cluster(ctx, AclOperation::alter_configs)) {
    // Kafka's ApiError leaves out a message that only repeats the error's.
    for (const auto& j : *judged) resp.entries.push_back(result(j, p::ErrorCode::cluster_authorization_failed, {}));
    co_return resp;
  }
  bool any_valid = false;
  for (const auto& j : *judged) any_valid |= !j.refusal;
  if (any_valid && !req.validate_only) {
    StoredDocument<ClientQuotas>::Change change = [judged](ClientQuotas& stored) { apply_alterations(*judged, stored); };
    if (auto ec = co_await ctx.broker.quotas().stored().alter(std::move(change))) {
      // Nothing was written: every entity failed.
      for (const auto& j : *judged)
        resp.entries.push_back(
            result(j, p::ErrorCode::unknown_server_error, "cannot store the client quotas: " + ec.message()));
      co_return resp;
    }
  }
  for (const auto& j : *judged) {
    if (j.refusal) resp.entries.push_back(result(j, j.refusal->code, j.refusal->message));
    else resp.entries.push_back(result(j, p::ErrorCode::none, std::nullopt));
  }
  co_return resp;
}

}  // namespace runnel::broker
