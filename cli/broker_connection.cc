#include "cli/broker_connection.h"

#include <arpa/inet.h>

#include <cstring>

#include "protocol/messages/18_api_versions.h"

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
  handshake();
}

void BrokerConnection::close() {
  boost::system::error_code ignored;
  socket_.close(ignored);
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
  asio::async_write(socket_, asio::buffer(frame), [&](const boost::system::error_code& e, size_t) { ec = e; });
  run_bounded(request_timeout_, "send");
  if (ec) fail("send: " + ec.message());
}

std::shared_ptr<protocol::Bytes> BrokerConnection::read_frame(std::chrono::milliseconds extra_wait) {
  if (!socket_.is_open()) fail("connection closed");
  uint32_t size = 0;
  auto body = std::make_shared<protocol::Bytes>();
  boost::system::error_code ec;
  asio::async_read(socket_, asio::buffer(&size, 4), [&](const boost::system::error_code& e, size_t) {
    ec = e;
    if (ec) return;
    body->resize(ntohl(size));
    asio::async_read(socket_, asio::buffer(*body), [&](const boost::system::error_code& e2, size_t) { ec = e2; });
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
