// One admin connection's bytes: plain TCP (http://) or TLS (https://), as
// one Beast stream, so the HTTP session and the REST endpoints are written
// once for both. It forwards async_read_some / async_write_some to the
// stream it holds; every completion token the admin code uses (Beast's
// composed operations, use_awaitable) gives both streams' operations the
// same type, so one function can return either.
//
// TLS here is Asio's ssl::stream (through Beast), not the Kafka listeners'
// security/tls_stream.h: that one exists for Fetch's large writes; an HTTP
// answer is small and Beast's parsers want a read_some stream.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "broker/asio.h"

namespace runnel::broker::admin {

namespace beast = boost::beast;

class HttpStream {
 public:
  using executor_type = beast::tcp_stream::executor_type;
  using TlsStream = beast::ssl_stream<beast::tcp_stream>;

  // Plain HTTP.
  explicit HttpStream(tcp::socket socket) : plain_(std::in_place, std::move(socket)) {}
  // HTTPS from `context` (kept alive by the caller's shared_ptr); handshake() first.
  HttpStream(tcp::socket socket, std::shared_ptr<asio::ssl::context> context)
      : context_(std::move(context)), tls_(std::make_unique<TlsStream>(std::move(socket), *context_)) {}

  executor_type get_executor() { return tcp_layer().get_executor(); }
  // The TCP stream under any TLS: its timeouts bound every operation.
  beast::tcp_stream& tcp_layer() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }
  tcp::socket& socket() { return tcp_layer().socket(); }
  void expires_after(std::chrono::steady_clock::duration d) { tcp_layer().expires_after(d); }
  bool is_tls() const { return tls_ != nullptr; }

  // The TLS server handshake, bounded by `limit`; nothing for plain HTTP.
  awaitable<error_code> handshake(std::chrono::steady_clock::duration limit);
  // The verified client certificate's subject (RFC 2253, as Java writes
  // it), if the client sent one.
  std::optional<std::string> peer_subject();
  // A close_notify for TLS (best effort, bounded), then the TCP send side.
  awaitable<void> shutdown();

  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    if (tls_) return tls_->async_read_some(buffers, std::forward<Token>(token));
    return plain_->async_read_some(buffers, std::forward<Token>(token));
  }
  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    if (tls_) return tls_->async_write_some(buffers, std::forward<Token>(token));
    return plain_->async_write_some(buffers, std::forward<Token>(token));
  }

 private:
  std::optional<beast::tcp_stream> plain_;
  std::shared_ptr<asio::ssl::context> context_;
  std::unique_ptr<TlsStream> tls_;
};

}  // namespace runnel::broker::admin
