// REST Proxy v2's consumer instances (v2_consumer_json.h has the bodies):
//
//   POST   /consumers/{group}                                     create
//   DELETE /consumers/{group}/instances/{name}                    delete (204)
//   POST | GET | DELETE  .../{name}/subscription                  subscribe
//   POST | GET  .../{name}/assignments                            assign by hand
//   POST   .../{name}/positions, positions/beginning, positions/end   seek (204)
//   GET    .../{name}/records?timeout=ms&max_bytes=n              poll
//   POST | GET  .../{name}/offsets                                commit, committed
//
// Requests carry application/vnd.kafka.v2+json (or application/json);
// answers are application/vnd.kafka.v2+json, records in the instance's
// format's type (a records Accept of the other format is 40601). Errors:
// 40403 no such instance, 40902 the name is taken, 40903 subscription and
// assignment mixed (and, Runnel's choice where REST Proxy answers 500, a
// poll with neither), 42204 a bad consumer config, 422 a body that is not
// the request, 40402 GET offsets without a body.
#include <boost/json/parse.hpp>

#include "broker/admin/rest/endpoints.h"
#include "broker/admin/rest/v2_consumer_json.h"
#include "broker/broker.h"
#include "storage/uuid_text.h"

namespace runnel::broker::admin::rest {

namespace json = boost::json;

namespace {

constexpr std::string_view kV2Json = "application/vnd.kafka.v2+json";
constexpr std::string_view kBinaryV2 = "application/vnd.kafka.binary.v2+json";
constexpr std::string_view kJsonV2 = "application/vnd.kafka.json.v2+json";
constexpr int64_t kMaxRequestBytes = 64 * 1024 * 1024;  // consumer.request.max.bytes

RestError instance_not_found() { return {40403, "Consumer instance not found."}; }
RestError instance_exists() {
  return {40902, "Consumer with specified consumer ID already exists in the specified consumer group."};
}
RestError format_mismatch() {
  return {40601, "The requested embedded data format does not match the deserializer for this consumer instance"};
}

std::string percent_encoded(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// java.util.UUID's text: 8-4-4-4-12 lowercase hex digits.
std::string java_uuid_text(const protocol::Uuid& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < id.bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[id.bytes[i] >> 4];
    out += kHex[id.bytes[i] & 15];
  }
  return out;
}

// The body as JSON: null when there is none; the error for one that is not JSON.
awaitable<std::variant<json::value, RestError>> json_body(Exchange& ex) {
  if (auto e = co_await read_body(ex, kMaxBody)) co_return *e;
  const std::string& text = ex.parser.get().body();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) co_return json::value(nullptr);
  const std::string type = ex.media_type(http::field::content_type);
  if (type != kV2Json && type != "application/vnd.kafka+json" && type != "application/json")
    co_return errors::unsupported_media_type();
  error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) co_return errors::bad_request("the body is not JSON: " + ec.message());
  co_return v;
}

awaitable<bool> no_content(Exchange& ex) { return send(ex, http::status::no_content, kV2Json, ""); }

awaitable<bool> create(Exchange& ex, const std::string& group) {
  auto body = co_await json_body(ex);
  if (auto* e = std::get_if<RestError>(&body)) co_return co_await send_error(ex, *e, kV2Json);
  auto parsed = parse_create_consumer(std::get<json::value>(body));
  if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await send_error(ex, *e, kV2Json);
  auto& request = std::get<CreateConsumerRequest>(parsed);
  const std::string name = request.name.value_or("rest-consumer-" + java_uuid_text(storage::random_uuid()));
  auto instance = ex.service.consumers().create(ex.client, group, name, request.config);
  if (!instance) co_return co_await send_error(ex, instance_exists(), kV2Json);
  const auto host = ex.request()[http::field::host];
  const std::string base_uri = std::string(ex.stream.is_tls() ? "https://" : "http://") +
                               std::string(host.data(), host.size()) + "/consumers/" + percent_encoded(group) +
                               "/instances/" + percent_encoded(name);
  co_return co_await send(ex, http::status::ok, kV2Json, create_consumer_answer(name, base_uri));
}

awaitable<bool> remove(Exchange& ex, const std::string& group, const std::string& name) {
  auto found = ex.service.consumers().find(group, name);
  if (!found || found->owner() != ex.client.principal) co_return co_await send_error(ex, instance_not_found(), kV2Json);
  auto instance = ex.service.consumers().remove(group, name);
  {
    co_await instance->lock();
    ConsumerInstance::Turn turn(*instance);
    co_await instance->close();
  }
  co_return co_await no_content(ex);
}

// The instance's answer to one request, in its turn.
awaitable<bool> on_instance(Exchange& ex, ConsumerInstance& c, const std::string& action, http::verb method) {
  const auto fail = [&](const RestError& e) { return send_error(ex, e, kV2Json); };
  if (action == "subscription" && method == http::verb::post) {
    auto body = co_await json_body(ex);
    if (auto* e = std::get_if<RestError>(&body)) co_return co_await fail(*e);
    auto parsed = parse_subscription(std::get<json::value>(body));
    if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await fail(*e);
    auto& s = std::get<SubscriptionRequest>(parsed);
    std::optional<RestError> e;
    if (s.topics) e = co_await c.subscribe(std::move(*s.topics));
    else if (s.topic_pattern) e = co_await c.subscribe_pattern(*s.topic_pattern);
    if (e) co_return co_await fail(*e);
    co_return co_await no_content(ex);
  }
  if (action == "subscription" && method == http::verb::get)
    co_return co_await send(ex, http::status::ok, kV2Json, topics_answer(c.subscription()));
  if (action == "subscription" && method == http::verb::delete_) {
    co_await c.unsubscribe();
    co_return co_await no_content(ex);
  }
  if (action == "assignments" && method == http::verb::post) {
    auto body = co_await json_body(ex);
    if (auto* e = std::get_if<RestError>(&body)) co_return co_await fail(*e);
    auto parsed = parse_partitions(std::get<json::value>(body));
    if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await fail(*e);
    if (auto e = co_await c.assign(std::move(std::get<0>(parsed)))) co_return co_await fail(*e);
    co_return co_await no_content(ex);
  }
  if (action == "assignments" && method == http::verb::get)
    co_return co_await send(ex, http::status::ok, kV2Json, partitions_answer(c.assignment()));
  if (action == "positions" || action == "positions/beginning" || action == "positions/end") {
    auto body = co_await json_body(ex);
    if (auto* e = std::get_if<RestError>(&body)) co_return co_await fail(*e);
    if (action == "positions") {
      auto parsed = parse_seek(std::get<json::value>(body));
      if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await fail(*e);
      const SeekRequest& seek = std::get<SeekRequest>(parsed);
      if (auto e = c.seek(seek.offsets)) co_return co_await fail(*e);
      if (auto e = co_await c.seek_to_times(seek.timestamps)) co_return co_await fail(*e);
    } else {
      auto parsed = parse_partitions(std::get<json::value>(body));
      if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await fail(*e);
      if (auto e = co_await c.seek_to(std::get<0>(parsed), action == "positions/beginning")) co_return co_await fail(*e);
    }
    co_return co_await no_content(ex);
  }
  if (action == "records") {
    // REST Proxy serves records by one method per format, chosen by the
    // Accept header: binary's also takes v2+json, */* and no Accept.
    const EmbeddedFormat format = c.config().format;
    const auto accept = ex.request()[http::field::accept];
    const std::string_view accepted(accept.data(), accept.size());
    const bool wants_json = accepted.find(kJsonV2) != std::string_view::npos;
    const bool wants_schema = accepted.find("avro.v2") != std::string_view::npos ||
                              accepted.find("jsonschema.v2") != std::string_view::npos ||
                              accepted.find("protobuf.v2") != std::string_view::npos;
    const bool wants_binary = !wants_json && !wants_schema;
    if ((format == EmbeddedFormat::binary) != wants_binary) co_return co_await fail(format_mismatch());
    const std::string_view type = format == EmbeddedFormat::binary ? kBinaryV2 : kJsonV2;
    auto timeout = c.config().request_timeout;
    if (auto t = ex.query_param("timeout")) {
      char* end = nullptr;
      const long long ms = std::strtoll(t->c_str(), &end, 10);
      // As REST Proxy: a timeout can only shorten consumer.request.timeout.ms.
      if (end && *end == '\0' && ms > 0) timeout = std::min(timeout, std::chrono::milliseconds(ms));
    }
    int64_t max_bytes = c.config().request_max_bytes;
    if (auto m = ex.query_param("max_bytes")) {
      char* end = nullptr;
      const long long n = std::strtoll(m->c_str(), &end, 10);
      if (end && *end == '\0' && n > 0) max_bytes = std::min<int64_t>(max_bytes, n);
    }
    auto polled = co_await c.poll(timeout, max_bytes);
    if (auto* e = std::get_if<RestError>(&polled)) co_return co_await fail(*e);
    auto answer = records_answer(std::get<0>(polled), format);
    if (auto* e = std::get_if<RestError>(&answer)) co_return co_await fail(*e);
    co_return co_await send(ex, http::status::ok, type, std::move(std::get<std::string>(answer)));
  }
  if (action == "offsets" && method == http::verb::post) {
    auto body = co_await json_body(ex);
    if (auto* e = std::get_if<RestError>(&body)) co_return co_await fail(*e);
    std::optional<std::map<TopicPartition, int64_t>> offsets;
    if (!std::get<json::value>(body).is_null()) {
      auto parsed = parse_offsets(std::get<json::value>(body));
      if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await fail(*e);
      // The body names the last offsets consumed; what is committed is the next.
      offsets = std::move(std::get<0>(parsed));
      for (auto& [tp, offset] : *offsets) ++offset;
    }
    auto committed = co_await c.commit(std::move(offsets));
    if (auto* e = std::get_if<RestError>(&committed)) co_return co_await fail(*e);
    co_return co_await send(ex, http::status::ok, kV2Json, "[]");
  }
  if (action == "offsets" && method == http::verb::get) {
    auto body = co_await json_body(ex);
    if (auto* e = std::get_if<RestError>(&body)) co_return co_await fail(*e);
    if (std::get<json::value>(body).is_null()) co_return co_await fail(errors::partition_not_found());
    auto parsed = parse_partitions(std::get<json::value>(body));
    if (auto* e = std::get_if<RestError>(&parsed)) co_return co_await fail(*e);
    const auto& asked = std::get<0>(parsed);
    auto committed = co_await c.committed(asked);
    if (auto* e = std::get_if<RestError>(&committed)) co_return co_await fail(*e);
    co_return co_await send(ex, http::status::ok, kV2Json, committed_answer(asked, std::get<0>(committed)));
  }
  co_return co_await send_error(ex, errors::method_not_allowed(), kV2Json);
}

}  // namespace

awaitable<bool> v2_consumers(Exchange& ex) {
  const auto& p = ex.path;  // "consumers", group, "instances", name, action...
  const http::verb method = ex.request().method();
  if (p.size() == 2) {
    if (method != http::verb::post) co_return co_await send_error(ex, errors::method_not_allowed(), kV2Json);
    co_return co_await create(ex, p[1]);
  }
  if (p.size() < 4 || p[2] != "instances") co_return co_await send_error(ex, errors::not_found(), kV2Json);
  if (p.size() == 4) {
    if (method != http::verb::delete_) co_return co_await send_error(ex, errors::method_not_allowed(), kV2Json);
    co_return co_await remove(ex, p[1], p[3]);
  }
  std::string action = p[4];
  if (p.size() == 6 && p[4] == "positions" && (p[5] == "beginning" || p[5] == "end")) action += "/" + p[5];
  else if (p.size() != 5) co_return co_await send_error(ex, errors::not_found(), kV2Json);
  static const std::map<std::string, std::vector<http::verb>> kMethods = {
      {"subscription", {http::verb::post, http::verb::get, http::verb::delete_}},
      {"assignments", {http::verb::post, http::verb::get}},
      {"positions", {http::verb::post}},
      {"positions/beginning", {http::verb::post}},
      {"positions/end", {http::verb::post}},
      {"records", {http::verb::get}},
      {"offsets", {http::verb::post, http::verb::get}}};
  auto allowed = kMethods.find(action);
  if (allowed == kMethods.end()) co_return co_await send_error(ex, errors::not_found(), kV2Json);
  if (std::find(allowed->second.begin(), allowed->second.end(), method) == allowed->second.end())
    co_return co_await send_error(ex, errors::method_not_allowed(), kV2Json);
  auto instance = ex.service.consumers().find(p[1], p[3]);
  // An instance is its creator's: another principal is told it does not
  // exist (it would read and commit with the creator's rights).
  if (!instance || instance->owner() != ex.client.principal)
    co_return co_await send_error(ex, instance_not_found(), kV2Json);
  co_await instance->lock();
  ConsumerInstance::Turn turn(*instance);
  // Deleted while this request waited its turn.
  if (instance->closed()) co_return co_await send_error(ex, instance_not_found(), kV2Json);
  co_return co_await on_instance(ex, *instance, action, method);
}

}  // namespace runnel::broker::admin::rest
