#include "broker/admin/rest/exchange.h"

#include <boost/asio/write.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "broker/admin/admin_server.h"

namespace runnel::broker::admin::rest {

std::string Exchange::media_type(http::field field) const {
  const auto v = request()[field];
  std::string out(v.substr(0, v.find(';')));
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  while (!out.empty() && (out.front() == ' ' || out.front() == '\t')) out.erase(0, 1);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<std::string> Exchange::query_param(std::string_view name) const {
  std::string_view q(query);
  while (!q.empty()) {
    const auto amp = q.find('&');
    const std::string_view pair = q.substr(0, amp);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == name) return std::string(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    q.remove_prefix(amp + 1);
  }
  return std::nullopt;
}

awaitable<bool> send(Exchange& ex, http::status status, std::string_view content_type, std::string body) {
  http::response<http::string_body> res{status, ex.request().version()};
  res.set(http::field::server, "runnel");
  res.set(http::field::content_type, content_type);
  res.body() = std::move(body);
  res.prepare_payload();
  res.keep_alive(ex.request().keep_alive() && ex.parser.is_done());
  ex.stream.expires_after(kIdleTimeout);
  auto [ec, n] = co_await http::async_write(ex.stream, res, as_tuple_awaitable);
  (void)n;
  co_return !ec && res.keep_alive();
}

awaitable<bool> send_error(Exchange& ex, const RestError& error, std::string_view content_type) {
  return send(ex, static_cast<http::status>(error.http_status()), content_type, error.to_json());
}

awaitable<std::optional<RestError>> read_body(Exchange& ex, size_t limit) {
  if (ex.parser.is_done()) co_return std::nullopt;
  if (auto length = ex.parser.content_length(); length && *length > limit) co_return errors::too_large(limit);
  ex.parser.body_limit(limit);  // bounds a chunked body as it comes
  ex.stream.expires_after(kIdleTimeout);
  auto [ec, n] = co_await http::async_read(ex.stream, ex.buffer, ex.parser, as_tuple_awaitable);
  (void)n;
  if (ec == http::error::body_limit) co_return errors::too_large(limit);
  if (ec) co_return errors::bad_request("the request body could not be read: " + ec.message());
  co_return std::nullopt;
}

ChunkedAnswer::ChunkedAnswer(Exchange& ex, std::string_view content_type)
    : ex_(ex), res_{http::status::ok, ex.request().version()}, serializer_(res_) {
  res_.set(http::field::server, "runnel");
  res_.set(http::field::content_type, content_type);
  res_.chunked(true);
  res_.keep_alive(ex.request().keep_alive());
}

awaitable<bool> ChunkedAnswer::write(std::string_view piece) {
  if (!started_) {
    started_ = true;
    ex_.stream.expires_after(kIdleTimeout);
    auto [ec, n] = co_await http::async_write_header(ex_.stream, serializer_, as_tuple_awaitable);
    (void)n;
    if (ec) co_return false;
  }
  if (piece.empty()) co_return true;  // an empty chunk would end the body
  ex_.stream.expires_after(kIdleTimeout);
  auto [ec, n] = co_await asio::async_write(ex_.stream, http::make_chunk(asio::buffer(piece.data(), piece.size())),
                                            as_tuple_awaitable);
  (void)n;
  co_return !ec;
}

awaitable<bool> ChunkedAnswer::finish() {
  const std::string_view nothing;
  if (!co_await write(nothing)) co_return false;
  ex_.stream.expires_after(kIdleTimeout);
  auto [ec, n] = co_await asio::async_write(ex_.stream, http::make_chunk_last(), as_tuple_awaitable);
  (void)n;
  co_return !ec && res_.keep_alive() && ex_.parser.is_done();
}

}  // namespace runnel::broker::admin::rest
