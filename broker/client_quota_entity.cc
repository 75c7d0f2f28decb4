#include "broker/client_quota_entity.h"

#include <boost/json.hpp>

namespace runnel::broker {

namespace json = boost::json;

std::string to_string(const ClientQuotaEntity& entity) {
  std::string out = "ClientQuotaEntity(entries={";
  bool first = true;
  for (const auto& [type, name] : entity) {
    if (!first) out += ", ";
    first = false;
    out += type + "=" + name.value_or("null");
  }
  return out + "})";
}

std::string encode_client_quotas(const ClientQuotas& quotas) {
  json::array entities;
  for (const auto& [entity, values] : quotas) {
    if (values.empty()) continue;
    json::object names;
    for (const auto& [type, name] : entity) {
      if (name) names[type] = *name;
      else names[type] = nullptr;
    }
    json::object by_key;
    for (const auto& [key, value] : values) by_key[key] = value;
    entities.push_back(json::object{{"entity", std::move(names)}, {"quotas", std::move(by_key)}});
  }
  return json::serialize(json::object{{"version", 1}, {"entities", std::move(entities)}});
}

std::optional<ClientQuotas> decode_client_quotas(const std::string& text) {
  boost::system::error_code ec;
  const json::value doc = json::parse(text, ec);
  if (ec || !doc.is_object()) return std::nullopt;
  const auto* entities = doc.as_object().if_contains("entities");
  if (!entities || !entities->is_array()) return std::nullopt;
  ClientQuotas out;
  for (const auto& item : entities->as_array()) {
    const auto* obj = item.if_object();
    if (!obj) return std::nullopt;
    const auto* names = obj->if_contains("entity");
    const auto* values = obj->if_contains("quotas");
    if (!names || !names->is_object() || names->as_object().empty() || !values || !values->is_object() ||
        values->as_object().empty())
      return std::nullopt;
    ClientQuotaEntity entity;
    for (const auto& n : names->as_object()) {
      if (n.value().is_null()) entity[std::string(n.key())] = std::nullopt;
      else if (const auto* s = n.value().if_string()) entity[std::string(n.key())] = std::string(*s);
      else return std::nullopt;
    }
    auto& mine = out[entity];
    for (const auto& v : values->as_object()) {
      if (!v.value().is_number()) return std::nullopt;
      mine[std::string(v.key())] = v.value().to_number<double>();
    }
  }
  return out;
}

}  // namespace runnel::broker
