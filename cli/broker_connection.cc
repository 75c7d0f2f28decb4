#include "cli/broker_connection.h"

#include <arpa/inet.h>

#include <boost/asio/ssl/host_name_verification.hpp>
#include <cstring>

#include "protocol/messages/17_sasl_handshake.h"
#include "protocol/messages/18_api_versions.h"
#include "protocol/messages/36_sasl_authenticate.h"
#include "security/sasl/sasl_client.h"

namespace runnel::cli {

namespace asio = boost::asio;
using asio::ip::tcp;

BrokerConnection::BrokerConnection(HostPort address, const ClientConfig& config)
    : address_(std::move(address)),
      client_id_(config.client_id()),
      request_timeout_(config.request_timeout()),
      socket_(io_) {
  std::string where = address_.host + ":" + std::to_string(address_.port);
  boost::system::error_code ec;
  tcp::resolver resolver(io_);
  auto endpoints = resolver.resolve(address_.host, std::to_string(address_.port), ec);
  if (ec) throw ConnectError("cannot resolve " + where + ": " + ec.message());
  bool done = false;
  asio::async_connect(socket_, endpoints, [&](const boost::system::error_code& e, const tcp::endpoint&) {
    ec = e;
    done = true;
  });
  run_bounded(config.connect_timeout(), "connect");
  if (!done || ec) {
    socket_.close();
    throw ConnectError("cannot connect to " + where + ": " + (ec ? ec.message() : "timed out"));
  }
  socket_.set_option(tcp::no_delay(true));
  ClientSecurity security = ClientSecurity::from(config);
  if (security.tls) tls_handshake(security);
  handshake();
  if (!security.sasl_mechanism.empty()) authenticate(security);
}

void BrokerConnection::tls_handshake(const ClientSecurity& security) {
  tls_context_ = security.tls_context();
  tls_ = std::make_unique<asio::ssl::stream<tcp::socket&>>(socket_, *tls_context_);
  // SNI, and the name the certificate must carry.
  SSL_set_tlsext_host_name(tls_->native_handle(), address_.host.c_str());
  if (security.verify_host) tls_->set_verify_callback(asio::ssl::host_name_verification(address_.host));
  boost::system::error_code ec;
  tls_->async_handshake(asio::ssl::stream_base::client, [&](const boost::system::error_code& e) { ec = e; });
  run_bounded(request_timeout_, "TLS handshake");
  if (ec) fail("TLS handshake: " + ec.message() + " (check -X ssl.ca.location and that the listener speaks TLS)");
}

void BrokerConnection::authenticate(const ClientSecurity& security) {
  const std::string where = address_.host + ":" + std::to_string(address_.port);
  protocol::SaslHandshakeRequest shake;
  shake.mechanism = security.sasl_mechanism;
  auto shook = call<protocol::SaslHandshakeApi>(shake, 1);
  if (shook.error_code != 0) {
    std::string offered;
    for (const auto& m : shook.mechanisms) offered += (offered.empty() ? "" : ", ") + m;
    throw KafkaError(shook.error_code, "SaslHandshake with " + where,
                     security.sasl_mechanism + " is not enabled there; it offers " + (offered.empty() ? "none" : offered));
  }
  auto client = security::sasl::create_sasl_client(security.sasl_mechanism, security.sasl_username,
                                                   security.sasl_password);
  protocol::SaslAuthenticateRequest request;
  request.auth_bytes = client->initial_response();
  const int16_t version = this->version<protocol::SaslAuthenticateApi>(2);
  for (;;) {
    auto answer = call<protocol::SaslAuthenticateApi>(request, version);
    if (answer.error_code != 0)
      throw KafkaError(answer.error_code, "SASL " + security.sasl_mechanism + " as " + security.sasl_username + " on " + where,
                       answer.error_message.value_or(""));
    // SCRAM's last answer carries the server's signature, checked here.
    auto next = client->evaluate_challenge(answer.auth_bytes);
    if (!next) fail("the broker's SASL " + security.sasl_mechanism + " answer did not verify: not the broker it claims to be");
    if (client->complete()) return;
    request.auth_bytes = std::move(*next);
  }
}

void BrokerConnection::close() {
  boost::system::error_code ignored;
  socket_.close(ignored);
  tls_.reset();
}

void BrokerConnection::fail(const std::string& why) {
  close();
  throw ConnectError(address_.host + ":" + std::to_string(address_.port) + ": " + why);
}

void BrokerConnection::run_bounded(std::chrono::milliseconds timeout, const char* what) {
  io_.restart();
  io_.run_for(timeout);
  if (!io_.stopped()) {
    // The operation is still pending: cancel it and let its handler run.
    boost::system::error_code ignored;
    socket_.close(ignored);
    io_.restart();
    io_.run();
    throw ConnectError(address_.host + ":" + std::to_string(address_.port) + ": " + what + " timed out after " +
                       std::to_string(timeout.count()) + " ms");
  }
}

void BrokerConnection::write_frame(protocol::Bytes& frame) {
  if (!socket_.is_open()) fail("connection closed");
  uint32_t size = htonl(static_cast<uint32_t>(frame.size() - 4));
  std::memcpy(frame.data(), &size, 4);
  boost::system::error_code ec;
  on_stream([&](auto& stream) {
    asio::async_write(stream, asio::buffer(frame), [&](const boost::system::error_code& e, size_t) { ec = e; });
  });
  run_bounded(request_timeout_, "send");
  if (ec) fail("send: " + ec.message());
}

std::shared_ptr<protocol::Bytes> BrokerConnection::read_frame(std::chrono::milliseconds extra_wait) {
  if (!socket_.is_open()) fail("connection closed");
  uint32_t size = 0;
  auto body = std::make_shared<protocol::Bytes>();
  boost::system::error_code ec;
  on_stream([&](auto& stream) {
    asio::async_read(stream, asio::buffer(&size, 4), [&](const boost::system::error_code& e, size_t) {
      ec = e;
      if (ec) return;
      body->resize(ntohl(size));
      asio::async_read(stream, asio::buffer(*body), [&](const boost::system::error_code& e2, size_t) { ec = e2; });
    });
  });
  run_bounded(request_timeout_ + extra_wait, "receive");
  if (ec) fail(ec == asio::error::eof ? std::string("the broker closed the connection") : "receive: " + ec.message());
  return body;
}

void BrokerConnection::handshake() {
  using protocol::ApiVersionsApi;
  protocol::ApiVersionsRequest req;
  req.client_software_name = "runnel-cli";
  req.client_software_version = "1";
  // v3 (Kafka 2.4+) is the oldest version a broker this CLI can use speaks.
  auto resp = call<ApiVersionsApi>(req, 3);
  check(resp.error_code, "ApiVersions to " + address_.host + ":" + std::to_string(address_.port));
  for (const auto& k : resp.api_keys) broker_versions_[k.api_key] = {k.min_version, k.max_version};
}

int16_t BrokerConnection::negotiate(int16_t key, const char* name, int16_t our_min, int16_t our_max) const {
  auto it = broker_versions_.find(key);
  if (it != broker_versions_.end()) {
    int16_t hi = std::min(our_max, it->second.second);
    if (hi >= std::max(our_min, it->second.first)) return hi;
  }
  throw KafkaError(35, std::string(name) + " on " + address_.host + ":" + std::to_string(address_.port),
                   "no version in common with this CLI");
}

}  // namespace runnel::cli
