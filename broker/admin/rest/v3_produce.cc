// POST /v3/clusters/{cluster_id}/topics/{topic}/records: REST Proxy v3's
// produce (v3_records_json.h has the JSON). The body is concatenated JSON
// records. A chunked request (streaming mode) is produced as it arrives:
// the records of each read together (one Produce, a batch per partition),
// their delivery reports, one per record in order, written back at once
// in a chunked answer that grows as records arrive. A request with a
// Content-Length is produced once read (every kBatchBytes of a large one)
// and gets its reports in one answer.
// The HTTP status is 200 once records are accepted; each report carries
// its own error_code. Before any record: 415 for a Content-Type other than
// application/json, 404 for another cluster's id or an unknown topic, 400
// for a body that is not JSON. A record that is not JSON ends the stream
// with a 400 report, and the connection unless the body was read to its end.
#include <boost/json/monotonic_resource.hpp>
#include <boost/json/stream_parser.hpp>
#include <boost/beast/http/read.hpp>

#include "broker/admin/admin_server.h"
#include "broker/admin/rest/endpoints.h"
#include "broker/admin/rest/v3_records_json.h"

namespace runnel::broker::admin::rest {

namespace json = boost::json;

namespace {

// How much of a body of known length is parsed before it is produced.
constexpr size_t kBatchBytes = 1024 * 1024;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// v3 names its errors with HTTP codes: 404 where v2 says 40401.
RestError v3_error(RestError e, const std::string& topic) {
  if (e.error_code == errors::topic_not_found().error_code) return {404, "Topic " + topic + " not found."};
  if (e.error_code == errors::partition_not_found().error_code) return {404, "Partition not found."};
  if (e.error_code == 40301) return {403, e.message};
  return e;
}

// Where the delivery reports go: the chunked answer or one whole body.
struct Reports {
  Exchange& ex;
  bool streamed;
  ChunkedAnswer chunked;
  std::string whole;
  size_t count = 0;

  Reports(Exchange& e, bool s) : ex(e), streamed(s), chunked(e, "application/json") {}
  awaitable<bool> add(const std::string& report) {
    ++count;
    if (!streamed) {
      whole += report;
      co_return true;
    }
    co_return co_await chunked.write(report);
  }
};

// Decodes and produces one read's records; the reports in request order.
awaitable<std::vector<std::string>> produce_values(Exchange& ex, const std::string& cluster, const std::string& topic,
                                                   int32_t partitions, const std::vector<json::value>& values) {
  std::vector<RestRecord> records;
  std::vector<std::variant<size_t, RestError>> slots;  // a record's index in `records`, or its error
  for (const auto& v : values) {
    auto parsed = parse_v3_record(v);
    if (auto* e = std::get_if<RestError>(&parsed)) {
      slots.emplace_back(*e);
      continue;
    }
    slots.emplace_back(records.size());
    records.push_back(std::move(std::get<RestRecord>(parsed)));
  }
  std::vector<RecordOutcome> outcomes;
  if (!records.empty()) outcomes = co_await ex.service.producer().produce(ex.client, topic, partitions, records);
  std::vector<std::string> reports;
  for (const auto& slot : slots) {
    if (const auto* e = std::get_if<RestError>(&slot)) {
      reports.push_back(e->to_json());
      continue;
    }
    const size_t i = std::get<size_t>(slot);
    RecordOutcome o = outcomes[i];
    if (o.error_code != 0) {
      const RestError e = v3_error({o.error_code, o.message}, topic);
      o.error_code = e.error_code;
      o.message = e.message;
    }
    reports.push_back(v3_delivery_report(cluster, topic, records[i], o));
  }
  co_return reports;
}

}  // namespace

awaitable<bool> v3_produce(Exchange& ex, const std::string& cluster, const std::string& topic) {
  if (ex.media_type(http::field::content_type) != "application/json")
    co_return co_await send_error(ex, errors::unsupported_media_type());
  if (cluster != cluster_id_of(ex.service.broker())) co_return co_await send_error(ex, errors::cluster_not_found(cluster));
  auto found = co_await ex.service.producer().partitions_of(ex.client, topic);
  if (auto* e = std::get_if<RestError>(&found)) co_return co_await send_error(ex, v3_error(*e, topic));
  const int32_t partitions = std::get<int32_t>(found);

  Reports out(ex, ex.request().chunked());
  // Each record's JSON in its own monotonic arena: one allocation per
  // record rather than one per node, freed with the record.
  const auto arena = [] { return json::make_shared_resource<json::monotonic_resource>(); };
  json::stream_parser parser;
  parser.reset(arena());
  bool in_value = false;  // the parser holds part of a record
  size_t value_bytes = 0;
  std::optional<RestError> stop;  // what ends the stream early
  std::string& body = ex.parser.get().body();
  std::vector<json::value> values;  // parsed, not yet produced
  size_t pending_bytes = 0;
  for (;;) {
    size_t at = 0;
    while (at < body.size() && !stop) {
      if (!in_value) {
        while (at < body.size() && is_space(body[at])) ++at;
        if (at == body.size()) break;
      }
      error_code ec;
      const size_t n = parser.write_some(body.data() + at, body.size() - at, ec);
      at += n;
      value_bytes += n;
      in_value = true;
      if (ec) {
        stop = errors::bad_request("the body is not JSON records: " + ec.message());
      } else if (parser.done()) {
        values.push_back(parser.release());
        parser.reset(arena());
        in_value = false;
        pending_bytes += value_bytes;
        value_bytes = 0;
      } else if (value_bytes > kMaxRecordJson) {
        stop = errors::too_large(kMaxRecordJson);
      }
    }
    body.erase(0, at);
    if (!stop && ex.parser.is_done() && in_value) {
      error_code ec;
      parser.finish(ec);
      if (ec || !parser.done()) stop = errors::bad_request("the body ends inside a record");
      else values.push_back(parser.release());
      in_value = false;
    }
    // A stream's records are produced as each read brings them; a body of
    // known length is produced when read, or every kBatchBytes of it.
    const bool produce_now = out.streamed || stop || ex.parser.is_done() || pending_bytes >= kBatchBytes;
    if (!values.empty() && produce_now) {
      const std::vector<std::string> reports = co_await produce_values(ex, cluster, topic, partitions, values);
      values.clear();
      pending_bytes = 0;
      for (const auto& r : reports)
        if (!co_await out.add(r)) co_return false;
    }
    if (stop || ex.parser.is_done()) break;
    ex.stream.expires_after(kIdleTimeout);
    auto [ec, n] = co_await http::async_read_some(ex.stream, ex.buffer, ex.parser, as_tuple_awaitable);
    (void)n;
    if (ec) {
      // A body that breaks off (or breaks HTTP's framing) ends the answer
      // too: the connection cannot carry another request.
      if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout) co_return false;
      stop = errors::bad_request("the request body could not be read: " + ec.message());
    }
  }
  // The connection carries another request only if this one's body was
  // read to its end (send() says so to the client).
  if (stop && out.count == 0) co_return co_await send_error(ex, *stop);
  if (stop && !co_await out.add(stop->to_json())) co_return false;
  if (out.streamed) co_return co_await out.chunked.finish();
  if (out.count == 0) co_return co_await send_error(ex, errors::bad_request("Request body is empty. Data is required."));
  co_return co_await send(ex, http::status::ok, "application/json", std::move(out.whole));
}

}  // namespace runnel::broker::admin::rest
