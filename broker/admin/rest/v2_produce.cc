// POST /topics/{topic} and /topics/{topic}/partitions/{partition}: REST
// Proxy v2's produce in its binary and json embedded formats
// (v2_records_json.h has the JSON). The whole body is read (at most
// kMaxBody), its records produced together, and the answer lists one
// offset per record. 415 for another Content-Type (Runnel has no schema
// registry for avro, protobuf or jsonschema), 406 for an Accept that admits
// no v2 JSON, 400 for a body that is not JSON, 422 for one that is no
// produce request, 40401 for an unknown topic, 40402 for an unknown partition.
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>

#include "broker/admin/rest/endpoints.h"
#include "broker/admin/rest/v2_records_json.h"

namespace runnel::broker::admin::rest {

namespace json = boost::json;

namespace {

constexpr std::string_view kV2Json = "application/vnd.kafka.v2+json";

// Whether one of the media ranges of an Accept header admits v2's answer.
bool accepts_v2(std::string_view accept) {
  if (accept.empty()) return true;
  while (!accept.empty()) {
    const size_t comma = accept.find(',');
    std::string_view range = accept.substr(0, comma);
    range = range.substr(0, range.find(';'));
    while (!range.empty() && range.front() == ' ') range.remove_prefix(1);
    while (!range.empty() && range.back() == ' ') range.remove_suffix(1);
    if (range == "*/*" || range == "application/*" || range == kV2Json || range == "application/vnd.kafka+json" ||
        range == "application/json")
      return true;
    if (comma == std::string_view::npos) break;
    accept.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

awaitable<bool> v2_produce(Exchange& ex, const std::string& topic, std::optional<int32_t> partition) {
  const std::string type = ex.media_type(http::field::content_type);
  std::optional<EmbeddedFormat> format;
  if (type == "application/vnd.kafka.binary.v2+json") format = EmbeddedFormat::binary;
  else if (type == "application/vnd.kafka.json.v2+json") format = EmbeddedFormat::json;
  if (!format) co_return co_await send_error(ex, errors::unsupported_media_type(), kV2Json);
  const auto accept = ex.request()[http::field::accept];
  if (!accepts_v2(std::string_view(accept.data(), accept.size())))
    co_return co_await send_error(ex, errors::not_acceptable(), kV2Json);
  if (auto e = co_await read_body(ex, kMaxBody)) co_return co_await send_error(ex, *e, kV2Json);

  error_code ec;
  json::monotonic_resource arena;  // the body's nodes, freed at once
  const json::value body = json::parse(ex.parser.get().body(), ec, &arena);
  if (ec) co_return co_await send_error(ex, errors::bad_request("the body is not JSON: " + ec.message()), kV2Json);
  auto parsed = parse_v2_records(body, *format);
  if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await send_error(ex, *e, kV2Json);
  std::vector<RestRecord>& records = std::get<std::vector<RestRecord>>(parsed);

  auto found = co_await ex.service.producer().partitions_of(ex.client, topic);
  if (auto* e = std::get_if<RestError>(&found)) co_return co_await send_error(ex, *e, kV2Json);
  const int32_t partitions = std::get<int32_t>(found);
  if (partition) {
    if (*partition >= partitions) co_return co_await send_error(ex, errors::partition_not_found(), kV2Json);
    for (auto& r : records) r.partition = partition;
  }
  const std::vector<RecordOutcome> outcomes =
      co_await ex.service.producer().produce(ex.client, topic, partitions, records);
  co_return co_await send(ex, http::status::ok, kV2Json, v2_produce_answer(outcomes));
}

}  // namespace runnel::broker::admin::rest
