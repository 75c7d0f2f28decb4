// POST /topics/{topic}/raw: Runnel's own endpoint, not REST Proxy's. The
// request body, whatever its Content-Type, is one record's value, as
// Apache Flume's HTTP sink posts an event body. Query parameters: key (the
// record key, taken as its UTF-8 bytes after percent-decoding) and
// partition. The answer is a v3 delivery report (200), or REST Proxy's
// error body under the error's own HTTP status (404 unknown topic, 413,
// 500 for a Kafka error), so a sender that retries non-2xx answers, as
// Flume's sink does, retries exactly the records not appended.
#include "broker/admin/rest/endpoints.h"
#include "broker/admin/rest/v3_records_json.h"

namespace runnel::broker::admin::rest {

namespace {

std::optional<std::string> percent_decoded(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      const auto hex = [](char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      };
      const int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

awaitable<bool> raw_produce(Exchange& ex, const std::string& topic) {
  RestRecord record;
  record.value_type = "BINARY";
  if (auto key = ex.query_param("key")) {
    record.key = percent_decoded(*key);
    if (!record.key) co_return co_await send_error(ex, errors::bad_request("key is not percent-encoded"));
    record.key_type = "BINARY";
  }
  if (auto p = ex.query_param("partition")) {
    char* end = nullptr;
    const long v = std::strtol(p->c_str(), &end, 10);
    if (p->empty() || *end != '\0' || v < 0 || v > INT32_MAX)
      co_return co_await send_error(ex, errors::bad_request("partition must be a partition number"));
    record.partition = static_cast<int32_t>(v);
  }
  if (auto e = co_await read_body(ex, kMaxBody)) co_return co_await send_error(ex, *e);
  record.value = std::move(ex.parser.get().body());

  auto found = co_await ex.service.producer().partitions_of(ex.client, topic);
  if (auto* e = std::get_if<RestError>(&found)) co_return co_await send_error(ex, *e);
  std::vector<RestRecord> records;
  records.push_back(std::move(record));
  const std::vector<RecordOutcome> outcomes =
      co_await ex.service.producer().produce(ex.client, topic, std::get<int32_t>(found), records);
  const RecordOutcome& o = outcomes.front();
  if (o.error_code != 0) {
    const RestError error{o.error_code, o.message};  // not braced inside the co_await: GCC 12
    co_return co_await send_error(ex, error);
  }
  co_return co_await send(ex, http::status::ok, "application/json",
                          v3_delivery_report(cluster_id_of(ex.service.broker()), topic, records.front(), o));
}

}  // namespace runnel::broker::admin::rest
