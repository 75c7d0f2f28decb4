#include "cluster/etcd/etcd_client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "cluster/errors.h"

namespace runnel::cluster::etcd {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using asio::awaitable;
using asio::ip::tcp;

namespace {

constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);
// gRPC's status codes, as the gateway reports them.
constexpr int64_t kGrpcNotFound = 5;
constexpr int64_t kGrpcOutOfRange = 11;  // a watch or range below the compacted revision
constexpr int64_t kGrpcUnavailable = 14;

// What etcd's error answer means to the caller; unavailable fails over.
std::error_code error_of(const std::string& body) {
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec || !v.is_object()) return make_error_code(ClusterErrc::bad_response);
  const auto& o = v.as_object();
  const int64_t code = int_field(o, "code");
  std::string message = o.contains("message") && o.at("message").is_string() ? std::string(o.at("message").as_string()) : "";
  if (code == kGrpcNotFound && message.find("lease not found") != std::string::npos)
    return make_error_code(ClusterErrc::lease_not_found);
  if (code == kGrpcOutOfRange || message.find("compacted") != std::string::npos)
    return make_error_code(ClusterErrc::compacted);
  if (code == kGrpcUnavailable) return make_error_code(ClusterErrc::unavailable);
  return make_error_code(ClusterErrc::bad_response);
}

bool fails_over(std::error_code ec) {
  return ec == make_error_code(ClusterErrc::unavailable) || ec.category() != cluster_category();
}

std::error_code to_std(const boost::system::error_code& ec) { return std::error_code(ec.value(), std::system_category()); }

http::request<http::string_body> post(const Endpoint& ep, const std::string& path, const json::object& body) {
  http::request<http::string_body> req{http::verb::post, path, 11};
  req.set(http::field::host, ep.host + ":" + ep.port);
  req.set(http::field::content_type, "application/json");
  req.body() = json::serialize(body);
  req.prepare_payload();
  return req;
}

awaitable<std::error_code> connect(beast::tcp_stream& stream, const Endpoint& ep, std::chrono::milliseconds timeout) {
  tcp::resolver resolver(stream.get_executor());
  auto [rec, results] = co_await resolver.async_resolve(ep.host, ep.port, kAsTuple);
  if (rec) co_return to_std(rec);
  stream.expires_after(timeout);
  auto [cec, _] = co_await stream.async_connect(results, kAsTuple);
  co_return cec ? to_std(cec) : std::error_code();
}

// Takes every complete line of `buf` as one JSON message.
bool take_messages(std::string& buf, const std::function<bool(const json::object&)>& on_message, std::error_code& error) {
  size_t nl;
  while ((nl = buf.find('\n')) != std::string::npos) {
    std::string line = buf.substr(0, nl);
    buf.erase(0, nl + 1);
    if (line.find_first_not_of(" \r\t") == std::string::npos) continue;
    boost::system::error_code ec;
    auto v = json::parse(line, ec);
    if (ec || !v.is_object()) {
      error = make_error_code(ClusterErrc::bad_response);
      return false;
    }
    const auto& o = v.as_object();
    if (auto* e = o.if_contains("error")) {
      error = e->is_object() ? error_of(json::serialize(*e)) : make_error_code(ClusterErrc::bad_response);
      return false;
    }
    auto* result = o.if_contains("result");
    if (!result || !result->is_object()) {
      error = make_error_code(ClusterErrc::bad_response);
      return false;
    }
    if (!on_message(result->as_object())) return false;
  }
  return true;
}

}  // namespace

int64_t int_field(const json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  if (!v) return 0;
  if (v->is_int64()) return v->as_int64();
  if (v->is_uint64()) return static_cast<int64_t>(v->as_uint64());
  if (v->is_string()) {
    try {
      return std::stoll(std::string(v->as_string()));
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

Result<std::vector<Endpoint>> parse_endpoints(const std::string& list) {
  std::vector<Endpoint> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::string scheme = "http://";
    if (item.compare(0, scheme.size(), scheme) != 0) return std::make_error_code(std::errc::invalid_argument);
    item.erase(0, scheme.size());
    if (!item.empty() && item.back() == '/') item.pop_back();
    size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      return std::make_error_code(std::errc::invalid_argument);
    out.push_back({item.substr(0, colon), item.substr(colon + 1)});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (out.empty()) return std::make_error_code(std::errc::invalid_argument);
  return out;
}

void StreamControl::stop() {
  stopped_ = true;
  if (close_) close_();
}

Client::Client(asio::any_io_executor ex, std::vector<Endpoint> endpoints, std::chrono::milliseconds timeout)
    : ex_(std::move(ex)), endpoints_(std::move(endpoints)), timeout_(timeout) {}

awaitable<Result<json::object>> Client::call(std::string path, json::object request) {
  for (size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    const size_t index = (current_ + attempt) % endpoints_.size();
    const Endpoint& ep = endpoints_[index];
    beast::tcp_stream stream(ex_);
    std::error_code ec = co_await connect(stream, ep, timeout_);
    http::response<http::string_body> res;
    if (!ec) {
      stream.expires_after(timeout_);
      auto req = post(ep, path, request);
      auto [wec, w] = co_await http::async_write(stream, req, kAsTuple);
      beast::flat_buffer buf;
      if (!wec) {
        auto [rec, r] = co_await http::async_read(stream, buf, res, kAsTuple);
        if (rec) ec = to_std(rec);
      } else {
        ec = to_std(wec);
      }
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    if (!ec && res.result() != http::status::ok) ec = error_of(res.body());
    if (!ec) {
      boost::system::error_code pec;
      auto v = json::parse(res.body(), pec);
      if (pec || !v.is_object()) co_return make_error_code(ClusterErrc::bad_response);
      current_ = index;
      co_return std::move(v.as_object());
    }
    if (!fails_over(ec)) co_return ec;
  }
  co_return make_error_code(ClusterErrc::unavailable);
}

awaitable<std::error_code> Client::stream(std::string path, json::object request,
                                          std::function<bool(const json::object&)> on_message,
                                          std::shared_ptr<StreamControl> control, bool untimed_after_first) {
  for (size_t attempt = 0; attempt < endpoints_.size(); ++attempt) {
    if (control->stopped()) co_return std::error_code();
    const size_t index = (current_ + attempt) % endpoints_.size();
    const Endpoint& ep = endpoints_[index];
    beast::tcp_stream stream(ex_);
    control->close_ = [&stream] { stream.cancel(); };
    std::error_code ec = co_await connect(stream, ep, timeout_);
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    beast::flat_buffer buf;
    if (!ec) {
      stream.expires_after(timeout_);
      auto req = post(ep, path, request);
      auto [wec, w] = co_await http::async_write(stream, req, kAsTuple);
      if (!wec) {
        auto [hec, h] = co_await http::async_read_header(stream, buf, parser, kAsTuple);
        if (hec) ec = to_std(hec);
      } else {
        ec = to_std(wec);
      }
    }
    if (!ec && parser.get().result() != http::status::ok) {
      while (!parser.is_done()) {
        auto [bec, b] = co_await http::async_read_some(stream, buf, parser, kAsTuple);
        if (bec) break;
      }
      ec = error_of(parser.get().body());
    }
    if (ec) {
      control->close_ = nullptr;
      if (control->stopped()) co_return std::error_code();
      if (!fails_over(ec)) co_return ec;
      continue;
    }
    current_ = index;
    // Streaming: messages until the end, a failure, or a stop.
    bool first = true;
    std::error_code error;
    for (;;) {
      if (!first && untimed_after_first) stream.expires_never();
      auto [rec, n] = co_await http::async_read_some(stream, buf, parser, kAsTuple);
      if (control->stopped()) break;
      auto& body = parser.get().body();
      bool more = true;
      if (!body.empty()) {
        first = false;
        more = take_messages(body, on_message, error);
      }
      if (!more || error) break;
      if (rec == http::error::end_of_stream || parser.is_done()) break;
      if (rec) {
        error = to_std(rec);
        break;
      }
    }
    control->close_ = nullptr;
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    co_return control->stopped() ? std::error_code() : error;
  }
  co_return make_error_code(ClusterErrc::unavailable);
}

}  // namespace runnel::cluster::etcd
