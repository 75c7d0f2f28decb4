#include "broker/admin/rest/v3_records_json.h"

#include <boost/json/serialize.hpp>

#include "broker/admin/rest/base64.h"
#include "broker/admin/rest/iso8601.h"

namespace runnel::broker::admin::rest {

namespace json = boost::json;

namespace {

struct Data {
  std::optional<std::string> bytes;
  std::string type;
};

// One of "key" or "value": absent or null is a null datum with no type.
std::variant<Data, RestError> parse_data(const json::object& record, std::string_view field) {
  const json::value* v = record.if_contains(field);
  if (!v || v->is_null()) return Data{};
  const json::object* o = v->if_object();
  if (!o) return errors::bad_request(std::string(field) + " must be an object with type and data");
  const json::value* type = o->if_contains("type");
  if (!type || !type->is_string())
    return errors::bad_request(std::string(field) +
                               ".type is required: BINARY, JSON or STRING (Runnel has no schema registry)");
  const std::string t(type->get_string());
  const json::value* data = o->if_contains("data");
  Data out{std::nullopt, t};
  if (t == "BINARY") {
    if (!data || data->is_null()) return out;
    if (!data->is_string()) return errors::bad_request(std::string(field) + ".data must be a base64 string");
    out.bytes = base64_decode(data->get_string());
    if (!out.bytes) return errors::bad_request(std::string(field) + ".data is not a valid base64 string");
  } else if (t == "STRING") {
    if (!data || data->is_null()) return out;
    if (!data->is_string()) return errors::bad_request(std::string(field) + ".data must be a string");
    out.bytes = std::string(data->get_string());
  } else if (t == "JSON") {
    if (!data || data->is_null()) return out;
    out.bytes = json::serialize(*data);
  } else if (t == "AVRO" || t == "PROTOBUF" || t == "JSONSCHEMA") {
    return errors::bad_request(std::string(field) + ".type " + t + " needs a schema registry, which Runnel does not have");
  } else {
    return errors::bad_request(std::string(field) + ".type must be BINARY, JSON or STRING, not " + t);
  }
  return out;
}

}  // namespace

std::variant<RestRecord, RestError> parse_v3_record(const json::value& value) {
  const json::object* o = value.if_object();
  if (!o) return errors::bad_request("a record must be a JSON object");
  RestRecord r;
  if (const json::value* p = o->if_contains("partition_id"); p && !p->is_null()) {
    if (!p->is_int64() || p->get_int64() < 0 || p->get_int64() > INT32_MAX)
      return errors::bad_request("partition_id must be a partition number");
    r.partition = static_cast<int32_t>(p->get_int64());
  }
  if (const json::value* t = o->if_contains("timestamp"); t && !t->is_null()) {
    if (!t->is_string()) return errors::bad_request("timestamp must be an ISO-8601 date-time string");
    r.timestamp_ms = parse_instant(t->get_string());
    if (!r.timestamp_ms) return errors::bad_request("timestamp is not an ISO-8601 date-time: " + std::string(t->get_string()));
  }
  if (const json::value* hs = o->if_contains("headers"); hs && !hs->is_null()) {
    if (!hs->is_array()) return errors::bad_request("headers must be an array");
    for (const auto& h : hs->get_array()) {
      const json::object* ho = h.if_object();
      const json::value* name = ho ? ho->if_contains("name") : nullptr;
      if (!name || !name->is_string()) return errors::bad_request("a header needs a string name");
      RestHeader header{std::string(name->get_string()), std::nullopt};
      if (const json::value* hv = ho->if_contains("value"); hv && !hv->is_null()) {
        if (!hv->is_string()) return errors::bad_request("a header value must be a base64 string");
        header.value = base64_decode(hv->get_string());
        if (!header.value) return errors::bad_request("header " + header.name + " is not a valid base64 string");
      }
      r.headers.push_back(std::move(header));
    }
  }
  auto key = parse_data(*o, "key");
  if (auto* e = std::get_if<RestError>(&key)) return *e;
  auto val = parse_data(*o, "value");
  if (auto* e = std::get_if<RestError>(&val)) return *e;
  r.key = std::move(std::get<Data>(key).bytes);
  r.key_type = std::get<Data>(key).type;
  r.value = std::move(std::get<Data>(val).bytes);
  r.value_type = std::get<Data>(val).type;
  return r;
}

std::string v3_delivery_report(std::string_view cluster_id, std::string_view topic, const RestRecord& record,
                               const RecordOutcome& outcome) {
  if (outcome.error_code != 0) return RestError{outcome.error_code, outcome.message}.to_json();
  // Written field by field rather than through a json::object: one report
  // per record is most of a v3 answer's cost.
  std::string out;
  out.reserve(192);
  out += R"({"error_code":200,"cluster_id":)";
  out += json::serialize(json::string_view(cluster_id));
  out += R"(,"topic_name":)";
  out += json::serialize(json::string_view(topic));
  out += R"(,"partition_id":)";
  out += std::to_string(outcome.partition);
  out += R"(,"offset":)";
  out += std::to_string(outcome.offset);
  out += R"(,"timestamp":")";
  out += format_instant(outcome.timestamp_ms);
  out += '"';
  const auto datum = [&out](std::string_view name, const std::string& type, const std::optional<std::string>& bytes) {
    out += ",\"";
    out += name;
    out += "\":{\"type\":";
    out += json::serialize(json::string_view(type));
    out += ",\"size\":";
    out += std::to_string(bytes ? bytes->size() : 0);
    out += '}';
  };
  if (!record.key_type.empty()) datum("key", record.key_type, record.key);
  if (!record.value_type.empty()) datum("value", record.value_type, record.value);
  out += '}';
  return out;
}

}  // namespace runnel::broker::admin::rest
