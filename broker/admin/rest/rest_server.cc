#include "broker/admin/rest/rest_server.h"

#include <boost/asio/write.hpp>
#include <boost/beast/core/string.hpp>

#include "broker/admin/admin_server.h"
#include "broker/admin/rest/endpoints.h"
#include "broker/broker.h"

namespace runnel::broker::admin::rest {

namespace {

int hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Splits "/a/b%2Fc" into {"a", "b/c"}; nullopt on a malformed escape.
std::optional<std::vector<std::string>> segments(std::string_view path) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < path.size()) {
    if (path[at] == '/') {
      ++at;
      continue;
    }
    const size_t end = std::min(path.find('/', at), path.size());
    std::string seg;
    for (size_t i = at; i < end; ++i) {
      if (path[i] != '%') {
        seg += path[i];
        continue;
      }
      if (i + 2 >= end) return std::nullopt;
      const int hi = hex(path[i + 1]), lo = hex(path[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      seg += static_cast<char>(hi * 16 + lo);
      i += 2;
    }
    out.push_back(std::move(seg));
    at = end;
  }
  return out;
}

std::optional<int32_t> partition_number(const std::string& s) {
  if (s.empty() || s.size() > 10) return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(v);
}

enum class Endpoint { none, list_clusters, get_cluster, v3_produce, v2_produce, v2_produce_partition, raw_produce };

// The endpoint a path names, and the method it takes.
Endpoint endpoint_of(const std::vector<std::string>& p, http::verb& method) {
  if (p.size() >= 2 && p[0] == "v3" && p[1] == "clusters") {
    method = p.size() <= 3 ? http::verb::get : http::verb::post;
    if (p.size() == 2) return Endpoint::list_clusters;
    if (p.size() == 3) return Endpoint::get_cluster;
    if (p.size() == 6 && p[3] == "topics" && p[5] == "records") return Endpoint::v3_produce;
  }
  if (p.size() >= 2 && p[0] == "topics") {
    method = http::verb::post;
    if (p.size() == 2) return Endpoint::v2_produce;
    if (p.size() == 3 && p[2] == "raw") return Endpoint::raw_produce;
    if (p.size() == 4 && p[2] == "partitions") return Endpoint::v2_produce_partition;
  }
  return Endpoint::none;
}

awaitable<bool> route(Exchange& ex) {
  const auto& p = ex.path;
  if (p[0] == "consumers") co_return co_await v2_consumers(ex);
  http::verb method = http::verb::get;
  const Endpoint e = endpoint_of(p, method);
  if (e == Endpoint::none) co_return co_await send_error(ex, errors::not_found());
  if (ex.request().method() != method) co_return co_await send_error(ex, errors::method_not_allowed());
  switch (e) {
    case Endpoint::list_clusters: co_return co_await list_clusters(ex);
    case Endpoint::get_cluster: co_return co_await get_cluster(ex, p[2]);
    case Endpoint::v3_produce: co_return co_await v3_produce(ex, p[2], p[4]);
    case Endpoint::v2_produce: co_return co_await v2_produce(ex, p[1], std::nullopt);
    case Endpoint::raw_produce: co_return co_await raw_produce(ex, p[1]);
    case Endpoint::v2_produce_partition: {
      const std::optional<int32_t> partition = partition_number(p[3]);
      if (!partition) co_return co_await send_error(ex, errors::partition_not_found());
      co_return co_await v2_produce(ex, p[1], partition);
    }
    case Endpoint::none: break;
  }
  co_return co_await send_error(ex, errors::not_found());
}

}  // namespace

RestService::RestService(Broker& broker)
    : producer_(broker),
      consumers_(broker, std::chrono::milliseconds(broker.config().get_long("runnel.rest.consumer.instance.timeout.ms"))) {
  asio::co_spawn(broker.io(), consumers_.expire_loop(), asio::detached);
}

bool is_rest_path(std::string_view path) {
  const auto under = [&](std::string_view prefix) {
    return path == prefix || (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix &&
                              path[prefix.size()] == '/');
  };
  return under("/v3") || under("/topics") || under("/consumers");
}

awaitable<bool> serve(HttpStream& stream, beast::flat_buffer& buffer,
                      http::request_parser<http::string_body>& parser, RestService& service,
                      const security::KafkaPrincipal& principal) {
  const std::string_view target(parser.get().target().data(), parser.get().target().size());
  const size_t q = target.find('?');
  std::string peer;
  error_code ec;
  auto remote = stream.socket().remote_endpoint(ec);
  if (!ec) peer = remote.address().to_string();
  auto path = segments(target.substr(0, q));
  Exchange ex{stream, buffer, parser, service, path ? std::move(*path) : std::vector<std::string>{},
              q == std::string_view::npos ? std::string() : std::string(target.substr(q + 1)), RestClient{peer, principal}};
  if (!path || ex.path.empty()) co_return co_await send_error(ex, errors::not_found());
  // curl sends a body over 1 KiB only once told to (or after a second).
  if (!parser.is_done() && beast::iequals(parser.get()[http::field::expect], "100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    stream.expires_after(kIdleTimeout);
    auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(kContinue.data(), kContinue.size()),
                                                as_tuple_awaitable);
    (void)wn;
    if (wec) co_return false;
  }
  co_return co_await route(ex);
}

}  // namespace runnel::broker::admin::rest
