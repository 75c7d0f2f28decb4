#include "broker/admin/admin_server.h"

#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "broker/admin/http_stream.h"
#include "broker/admin/prometheus_text.h"
#include "broker/admin/rest/rest_server.h"
#include "broker/logging.h"
#include "broker/server.h"

namespace runnel::broker::admin {

namespace beast = boost::beast;

namespace {

using Response = http::response<http::string_body>;

Response text_response(http::status status, unsigned version, std::string_view content_type, std::string body) {
  Response res{status, version};
  res.set(http::field::server, "runnel");
  res.set(http::field::content_type, content_type);
  res.body() = std::move(body);
  res.prepare_payload();
  return res;
}

std::string_view path_of(const http::request<http::string_body>& request) {
  const std::string_view target(request.target().data(), request.target().size());
  return target.substr(0, target.find('?'));
}

bool is_parse_error(const error_code& ec) { return ec.category() == beast::http::make_error_code(http::error::bad_method).category(); }

// A 401 as REST Proxy's Jetty answers it, with a JSON body like its errors.
Response unauthorized(unsigned version) {
  Response res = text_response(http::status::unauthorized, version, "application/json",
                               "{\"error_code\":401,\"message\":\"Unauthorized\"}");
  res.set(http::field::www_authenticate, "Basic realm=\"runnel\"");
  return res;
}

// Who the request is from: valid Basic credentials where the path needs
// them (nullopt: answer 401), else the connection's principal.
std::optional<security::KafkaPrincipal> requester(const http::request<http::string_body>& request,
                                                  const security::KafkaPrincipal& connection,
                                                  const AdminState& state) {
  if (!state.auth || !state.auth->requires_basic(path_of(request))) return connection;
  auto header = request[http::field::authorization];
  return state.auth->basic(std::string_view(header.data(), header.size()));
}

// One connection: requests in turn until the peer closes, an error, a
// timeout or a request that asks to close.
awaitable<void> session(HttpStream stream, const AdminState& state) {
  security::KafkaPrincipal principal;  // User:ANONYMOUS until a certificate says otherwise
  if (stream.is_tls()) {
    if (auto ec = co_await stream.handshake(kIdleTimeout)) co_return;
    if (auto dn = stream.peer_subject(); dn && state.auth) {
      auto mapped = state.auth->certificate(*dn);
      if (!mapped) {
        // Kafka refuses a certificate no ssl.principal.mapping.rules rule maps.
        RLOG_INFO("admin: refused TLS client %s: no ssl.principal.mapping.rules rule applies", dn->c_str());
        co_await stream.shutdown();
        co_return;
      }
      principal = *mapped;
    }
  }
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(boost::none);  // the REST endpoints bound their own bodies
    parser.header_limit(kHeaderLimit);
    stream.expires_after(kIdleTimeout);
    auto [hec, hn] = co_await http::async_read_header(stream, buffer, parser, as_tuple_awaitable);
    error_code ec = hec;
    std::optional<security::KafkaPrincipal> who;
    if (!ec) who = requester(parser.get(), principal, state);
    if (!ec && who && state.rest && rest::is_rest_path(path_of(parser.get()))) {
      if (!co_await rest::serve(stream, buffer, parser, *state.rest, *who)) break;
      continue;
    }
    if (!ec && !who) {
      // The body is not read: the connection cannot carry another request then.
      Response res = unauthorized(parser.get().version());
      res.keep_alive(parser.get().keep_alive() && parser.is_done());
      stream.expires_after(kIdleTimeout);
      auto [wec, wn] = co_await http::async_write(stream, res, as_tuple_awaitable);
      if (wec || !res.keep_alive()) break;
      continue;
    }
    if (!ec && parser.content_length() && *parser.content_length() > kBodyLimit) ec = http::error::body_limit;
    if (!ec && !parser.is_done()) {
      parser.body_limit(kBodyLimit);
      stream.expires_after(kIdleTimeout);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, as_tuple_awaitable);
      ec = bec;
    }
    if (ec) {
      if (is_parse_error(ec) && ec != http::error::end_of_stream && ec != http::error::partial_message) {
        Response bad = text_response(http::status::bad_request, 11, "text/plain", "bad request\n");
        bad.keep_alive(false);
        stream.expires_after(kIdleTimeout);
        auto [wec, wn] = co_await http::async_write(stream, bad, as_tuple_awaitable);
        (void)wec;
        (void)wn;
      }
      break;
    }
    Response res = respond(parser.get(), state);
    res.keep_alive(parser.get().keep_alive());
    stream.expires_after(kIdleTimeout);
    auto [wec, wn] = co_await http::async_write(stream, res, as_tuple_awaitable);
    if (wec || !res.keep_alive()) break;
  }
  co_await stream.shutdown();
}

}  // namespace

Response respond(const http::request<http::string_body>& request, const AdminState& state) {
  const unsigned v = request.version();
  const std::string_view path = path_of(request);
  std::optional<JsonAnswer> document;
  if (path.starts_with("/v1/") && state.json) document = state.json(path);
  const bool known = path == "/v1/status/live" || path == "/v1/status/ready" || path == "/metrics" || document;
  if (!known) return text_response(http::status::not_found, v, "text/plain", "not found\n");
  if (request.method() != http::verb::get) {
    Response res = text_response(http::status::method_not_allowed, v, "text/plain", "method not allowed\n");
    res.set(http::field::allow, "GET");
    return res;
  }
  if (path == "/v1/status/live") return text_response(http::status::ok, v, "application/json", "{\"live\":true}");
  if (path == "/v1/status/ready") {
    const bool ready = state.ready && state.ready();
    return text_response(ready ? http::status::ok : http::status::service_unavailable, v, "application/json",
                         ready ? "{\"ready\":true}" : "{\"ready\":false}");
  }
  if (document)
    return text_response(static_cast<http::status>(document->status), v, "application/json",
                         std::move(document->body));
  return text_response(http::status::ok, v, kTextContentType, state.metrics ? state.metrics() : std::string());
}

std::vector<Listener> admin_listeners(const BrokerConfig& config) {
  auto spec = config.get_optional("runnel.admin.listeners");
  if (!spec) return {};
  return parse_listeners(*spec, "runnel.admin.listeners");
}

AdminServer::AdminServer(asio::io_context& io, AdminState state) : io_(io), state_(std::move(state)) {}

void AdminServer::bind(const std::vector<Listener>& listeners) {
  for (const auto& l : listeners) {
    const bool https = l.name == "https";
    if (https && !state_.tls) throw ConfigError("an https admin listener needs its TLS configuration");
    auto host = l.host.empty() ? std::string("0.0.0.0") : l.host;
    tcp::acceptor acceptor = listen_on(io_, host, l.port);
    RLOG_INFO("admin listening on %s://%s:%u", l.name.c_str(), host.c_str(), acceptor.local_endpoint().port());
    acceptors_.push_back(Bound{std::move(acceptor), https});
  }
}

awaitable<void> AdminServer::accept_loop(Bound& bound) {
  tcp::acceptor& acceptor = bound.acceptor;
  asio::steady_timer backoff(io_);
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(as_tuple_awaitable);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      // Out of descriptors: the connection stays in the backlog; pause
      // rather than spin, as the Kafka listeners do.
      RLOG_WARN("admin accept failed: %s", ec.message().c_str());
      backoff.expires_after(std::chrono::milliseconds(500));
      co_await backoff.async_wait(as_tuple_awaitable);
      continue;
    }
    if (bound.https)
      asio::co_spawn(io_, session(HttpStream(std::move(socket), state_.tls), state_), asio::detached);
    else
      asio::co_spawn(io_, session(HttpStream(std::move(socket)), state_), asio::detached);
  }
}

void AdminServer::start() {
  for (auto& a : acceptors_) asio::co_spawn(io_, accept_loop(a), asio::detached);
}

void AdminServer::stop() {
  for (auto& a : acceptors_) {
    error_code ignored;
    a.acceptor.close(ignored);
  }
}

}  // namespace runnel::broker::admin
