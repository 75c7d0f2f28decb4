// One blocking connection to one broker, speaking Runnel's generated codec.
// On connect it asks ApiVersions, so each request goes at the highest
// version both sides speak (capped where the CLI relies on a version's
// shape, e.g. topic names rather than ids). Every connect, write and read
// is bounded by a timeout; a failure closes the connection and throws
// ConnectError, so the caller can reconnect or try another broker.
// Responses come back in request order, so requests may be pipelined: send()
// now, receive() later, in the same order. With -X security.protocol SSL or
// SASL_* (client_security.h) the TLS handshake follows the connect and the
// SASL exchange (SaslHandshake v1, SaslAuthenticate) follows ApiVersions,
// as librdkafka orders them.
#pragma once

#include <boost/asio.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "cli/client_config.h"
#include "cli/client_security.h"
#include "cli/kafka_errors.h"
#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/header.h"

namespace runnel::cli {

class BrokerConnection {
 public:
  BrokerConnection(HostPort address, const ClientConfig& config);
  BrokerConnection(const BrokerConnection&) = delete;
  BrokerConnection& operator=(const BrokerConnection&) = delete;

  const HostPort& address() const { return address_; }
  bool is_open() const { return socket_.is_open(); }

  // The highest version of Api both sides speak, at most `cap`; KafkaError
  // UNSUPPORTED_VERSION when there is none.
  template <typename Api>
  int16_t version(int16_t cap = INT16_MAX) const {
    return negotiate(Api::key, Api::name, Api::min_version, std::min<int16_t>(Api::max_version, cap));
  }
  bool supports(int16_t api_key) const { return broker_versions_.count(api_key) > 0; }

  template <typename Api>
  int32_t send(const typename Api::Request& request, int16_t version) {
    protocol::Bytes frame(4);
    protocol::Writer w(frame);
    protocol::RequestHeader header{Api::key, version, next_correlation_id_++, client_id_, {}};
    header.encode(w, protocol::request_header_version(Api::is_flexible(version)));
    request.encode(w, version);
    write_frame(frame);
    return header.correlation_id;
  }

  template <typename Api>
  typename Api::Response receive(int32_t correlation_id, int16_t version,
                                 std::chrono::milliseconds extra_wait = std::chrono::milliseconds(0)) {
    auto body = read_frame(extra_wait);
    protocol::Reader r(protocol::ByteView(body->data(), body->size()), body);
    protocol::ResponseHeader header;
    header.decode(r, protocol::response_header_version(Api::key, Api::is_flexible(version)));
    typename Api::Response response;
    response.decode(r, version);
    if (!r.ok()) fail(std::string("malformed ") + Api::name + " response: " + r.error());
    if (header.correlation_id != correlation_id) fail("response out of order");
    return response;
  }

  template <typename Api>
  typename Api::Response call(const typename Api::Request& request, int16_t version,
                              std::chrono::milliseconds extra_wait = std::chrono::milliseconds(0)) {
    return receive<Api>(send<Api>(request, version), version, extra_wait);
  }

  void close();

 private:
  int16_t negotiate(int16_t key, const char* name, int16_t our_min, int16_t our_max) const;
  void handshake();
  void tls_handshake(const ClientSecurity& security);
  void authenticate(const ClientSecurity& security);
  // f(stream) on the TLS stream when there is one, else on the socket.
  template <typename F>
  void on_stream(F&& f) {
    if (tls_)
      f(*tls_);
    else
      f(socket_);
  }
  void write_frame(protocol::Bytes& frame);
  std::shared_ptr<protocol::Bytes> read_frame(std::chrono::milliseconds extra_wait);
  // Runs the io_context until the started operation completes or `timeout`
  // passes; on timeout the socket is closed and ConnectError thrown.
  void run_bounded(std::chrono::milliseconds timeout, const char* what);
  [[noreturn]] void fail(const std::string& why);

  HostPort address_;
  std::string client_id_;
  std::chrono::milliseconds request_timeout_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  std::shared_ptr<boost::asio::ssl::context> tls_context_;
  std::unique_ptr<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
  std::map<int16_t, std::pair<int16_t, int16_t>> broker_versions_;  // key -> min, max
  int32_t next_correlation_id_ = 1;
};

}  // namespace runnel::cli
