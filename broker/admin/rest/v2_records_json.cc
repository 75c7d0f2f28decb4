#include "broker/admin/rest/v2_records_json.h"

#include <boost/json/serialize.hpp>

#include "broker/admin/rest/base64.h"

namespace runnel::broker::admin::rest {

namespace json = boost::json;

namespace {

RestError unprocessable(std::string why) { return {422, std::move(why)}; }

std::variant<std::optional<std::string>, RestError> datum(const json::object& record, std::string_view field,
                                                          EmbeddedFormat format) {
  const json::value* v = record.if_contains(field);
  if (!v || v->is_null()) return std::optional<std::string>{};
  if (format == EmbeddedFormat::json) return std::optional<std::string>{json::serialize(*v)};
  if (!v->is_string()) return unprocessable(std::string(field) + " must be a base64 string in the binary format");
  auto bytes = base64_decode(v->get_string());
  if (!bytes) return unprocessable(std::string(field) + " is not a valid base64 string");
  return std::optional<std::string>{std::move(*bytes)};
}

}  // namespace

std::variant<std::vector<RestRecord>, RestError> parse_v2_records(const json::value& body, EmbeddedFormat format) {
  const json::object* o = body.if_object();
  if (!o) return unprocessable("The request body must be a JSON object with records");
  const json::value* records = o->if_contains("records");
  if (!records || !records->is_array()) return unprocessable("records must be a list of records");
  if (records->get_array().empty()) return unprocessable("records may not be empty");
  std::vector<RestRecord> out;
  out.reserve(records->get_array().size());
  for (const auto& r : records->get_array()) {
    const json::object* ro = r.if_object();
    if (!ro) return unprocessable("a record must be a JSON object");
    RestRecord rec;
    auto key = datum(*ro, "key", format);
    if (auto* e = std::get_if<RestError>(&key)) return *e;
    auto value = datum(*ro, "value", format);
    if (auto* e = std::get_if<RestError>(&value)) return *e;
    rec.key = std::move(std::get<0>(key));
    rec.value = std::move(std::get<0>(value));
    if (const json::value* p = ro->if_contains("partition"); p && !p->is_null()) {
      if (!p->is_int64() || p->get_int64() < 0 || p->get_int64() > INT32_MAX)
        return unprocessable("partition must be a partition number");
      rec.partition = static_cast<int32_t>(p->get_int64());
    }
    out.push_back(std::move(rec));
  }
  return out;
}

std::string v2_produce_answer(const std::vector<RecordOutcome>& outcomes) {
  json::array offsets;
  for (const auto& o : outcomes) {
    json::object e;
    if (o.error_code == 0) {
      e["partition"] = o.partition;
      e["offset"] = o.offset;
      e["error_code"] = nullptr;
      e["error"] = nullptr;
    } else {
      e["partition"] = nullptr;
      e["offset"] = nullptr;
      e["error_code"] = o.retriable ? 2 : 1;
      e["error"] = o.message;
    }
    offsets.push_back(std::move(e));
  }
  json::object answer;
  answer["offsets"] = std::move(offsets);
  answer["key_schema_id"] = nullptr;
  answer["value_schema_id"] = nullptr;
  return json::serialize(answer);
}

}  // namespace runnel::broker::admin::rest
