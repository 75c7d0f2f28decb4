// The admin listener (runnel.admin.listeners, http://host:port or
// https://host:port): HTTP/1.1 through Boost.Beast, one coroutine per
// connection reading requests in turn; TLS and who a request is from in
// admin_auth.h (a path that needs Basic credentials and lacks valid ones
// gets 401). It serves
//   GET /v1/status/live   200 while the process serves;
//   GET /v1/status/ready  200 {"ready":true} once the broker is ready, else 503;
//   GET /metrics          the Prometheus text (metrics.h);
//   GET /v1/brokers, /v1/topics, /v1/partitions/<topic>  JSON (status_json.h);
//   /v3/..., /topics/...  the REST Proxy compatible endpoints (rest/rest_server.h),
//                         which read their own bodies;
// any other path 404, any other method on these 405. A request that does
// not parse gets 400 and the connection is closed; so is one idle for
// kIdleTimeout. Other bodies are limited to kBodyLimit (no endpoint takes one).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "broker/admin/admin_auth.h"
#include "broker/admin/status_json.h"
#include "broker/asio.h"
#include "broker/config.h"

namespace runnel::broker::admin {

namespace rest {
class RestService;
}

namespace http = boost::beast::http;

inline constexpr std::chrono::seconds kIdleTimeout{30};
inline constexpr size_t kBodyLimit = 64 * 1024;
inline constexpr size_t kHeaderLimit = 16 * 1024;

// What the endpoints report, asked per request.
struct AdminState {
  std::function<bool()> ready;
  std::function<std::string()> metrics;  // Prometheus text
  std::function<std::optional<JsonAnswer>(std::string_view path)> json;  // nullopt: no such document
  rest::RestService* rest = nullptr;      // the REST endpoints; none when null
  std::shared_ptr<asio::ssl::context> tls;  // the https:// listeners' (admin_ssl_context)
  AdminAuthenticator* auth = nullptr;       // none: every request is User:ANONYMOUS
};

// The answer to one parsed request (keep-alive left to the caller).
http::response<http::string_body> respond(const http::request<http::string_body>& request, const AdminState& state);

// The admin listeners of runnel.admin.listeners (none when it is unset).
std::vector<Listener> admin_listeners(const BrokerConfig& config);

class AdminServer {
 public:
  AdminServer(asio::io_context& io, AdminState state);
  // Binds each listener; port 0 picks a free one, logged as
  // "admin listening on http://host:port" (or https://).
  void bind(const std::vector<Listener>& listeners);
  void start();
  // Stops accepting; open connections end at their next request or timeout.
  void stop();

 private:
  struct Bound {
    tcp::acceptor acceptor;
    bool https = false;
  };
  awaitable<void> accept_loop(Bound& bound);

  asio::io_context& io_;
  AdminState state_;
  std::vector<Bound> acceptors_;
};

}  // namespace runnel::broker::admin
