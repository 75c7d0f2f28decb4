// A connection from this broker to another, for the requests brokers send
// each other (Kafka's BrokerBlockingSender over its NetworkClient): the
// replica fetcher's Fetch and OffsetForLeaderEpoch. One request in flight
// at a time, as a fetcher thread has; connected on first use and again
// after any failure; every connect, write and read bounded by `timeout`
// (replica.socket.timeout.ms), so a silent peer fails the request instead
// of stalling the fetcher. Over TLS when the inter-broker listener is SSL:
// the same security::TransportLayer the broker serves clients through, on
// its client side. On a SASL listener each connection first authenticates
// (SaslHandshake v1, then SaslAuthenticate until the mechanism completes),
// and a session the leader gave a lifetime (KIP-368) is replaced by a new,
// freshly authenticated connection before it expires.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include "broker/asio.h"
#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/header.h"
#include "security/sasl/sasl_client.h"
#include "security/transport_layer.h"
#include "storage/errors.h"

namespace runnel::replication {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
template <typename T>
using Result = storage::Result<T>;

class BrokerSender {
 public:
  // `tls`: connect with TLS (nullptr: plaintext); `verify_host`: the
  // server's certificate must name `host`.
  // `sasl`: authenticate with these (nullopt: no SASL).
  BrokerSender(asio::any_io_executor ex, std::string host, uint16_t port, std::string client_id,
               std::chrono::milliseconds timeout, std::shared_ptr<asio::ssl::context> tls = nullptr,
               bool verify_host = true, std::optional<security::sasl::SaslCredentials> sasl = std::nullopt);
  ~BrokerSender();

  // Sends `request` at `version` and returns the peer's response. Errors:
  // the connection's (refused, reset, timed out) or a malformed response;
  // the connection is closed after either.
  template <typename Api>
  awaitable<Result<typename Api::Response>> send(const typename Api::Request& request, int16_t version);

  void close();
  const std::string& host() const { return host_; }
  uint16_t port() const { return port_; }

 private:
  // One framed round trip: the request frame out, the response body back.
  awaitable<Result<std::shared_ptr<protocol::Bytes>>> round_trip(protocol::Bytes frame);
  awaitable<std::error_code> connect();
  // The SASL exchange on a new connection; an error fails the connect.
  awaitable<std::error_code> authenticate();

  asio::any_io_executor ex_;
  std::string host_;
  uint16_t port_;
  std::string client_id_;
  std::chrono::milliseconds timeout_;
  std::shared_ptr<asio::ssl::context> tls_;
  bool verify_host_;
  std::optional<security::sasl::SaslCredentials> sasl_;
  std::unique_ptr<security::TransportLayer> transport_;
  // When the authenticated session ends (KIP-368), if the leader set one.
  std::optional<std::chrono::steady_clock::time_point> session_expiry_;
  int32_t next_correlation_id_ = 0;
};

template <typename Api>
awaitable<Result<typename Api::Response>> BrokerSender::send(const typename Api::Request& request, int16_t version) {
  protocol::Bytes frame(4);
  protocol::Writer w(frame);
  const int32_t correlation_id = next_correlation_id_++;
  protocol::RequestHeader header{Api::key, version, correlation_id, client_id_, {}};
  header.encode(w, protocol::request_header_version(Api::is_flexible(version)));
  request.encode(w, version);
  auto body = co_await round_trip(std::move(frame));
  if (!body) co_return body.error();
  protocol::Reader r(protocol::ByteView((*body)->data(), (*body)->size()), *body);
  protocol::ResponseHeader rh;
  rh.decode(r, protocol::response_header_version(Api::key, Api::is_flexible(version)));
  typename Api::Response response;
  response.decode(r, version);
  if (!r.ok() || rh.correlation_id != correlation_id) {
    close();
    co_return std::make_error_code(std::errc::bad_message);
  }
  co_return response;
}

}  // namespace runnel::replication
