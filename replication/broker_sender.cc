#include "replication/broker_sender.h"

#include <arpa/inet.h>

#include <cstring>

namespace runnel::replication {

namespace {

using namespace asio::experimental::awaitable_operators;

// Kafka's socket.request.max.bytes bounds what a broker accepts; a response
// larger than replica.fetch.response.max.bytes plus headroom is refused.
constexpr uint32_t kMaxResponseBytes = 256u << 20;

}  // namespace

BrokerSender::BrokerSender(asio::any_io_executor ex, std::string host, uint16_t port, std::string client_id,
                           std::chrono::milliseconds timeout)
    : ex_(std::move(ex)), host_(std::move(host)), port_(port), client_id_(std::move(client_id)), timeout_(timeout) {}

BrokerSender::~BrokerSender() { close(); }

void BrokerSender::close() {
  if (!socket_) return;
  boost::system::error_code ignored;
  socket_->close(ignored);
  socket_.reset();
}

awaitable<std::error_code> BrokerSender::connect() {
  tcp::resolver resolver(ex_);
  asio::steady_timer timer(ex_, timeout_);
  auto resolved = co_await (resolver.async_resolve(host_, std::to_string(port_), asio::as_tuple(asio::use_awaitable)) ||
                            timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (resolved.index() == 1) co_return std::make_error_code(std::errc::timed_out);
  auto [rerr, endpoints] = std::get<0>(resolved);
  if (rerr) co_return std::error_code(rerr.value(), std::system_category());
  auto socket = std::make_unique<tcp::socket>(ex_);
  timer.expires_after(timeout_);
  auto connected = co_await (asio::async_connect(*socket, endpoints, asio::as_tuple(asio::use_awaitable)) ||
                             timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (connected.index() == 1) co_return std::make_error_code(std::errc::timed_out);
  if (auto [cerr, ep] = std::get<0>(connected); cerr) co_return std::error_code(cerr.value(), std::system_category());
  boost::system::error_code ignored;
  socket->set_option(tcp::no_delay(true), ignored);
  socket_ = std::move(socket);
  co_return std::error_code{};
}

awaitable<Result<std::shared_ptr<protocol::Bytes>>> BrokerSender::round_trip(protocol::Bytes frame) {
  const uint32_t size = htonl(static_cast<uint32_t>(frame.size() - 4));
  std::memcpy(frame.data(), &size, 4);
  if (!socket_)
    if (auto ec = co_await connect()) co_return ec;
  asio::steady_timer timer(ex_, timeout_);
  // The whole exchange under one deadline: write, size, body.
  auto exchange = [this, &frame]() -> awaitable<Result<std::shared_ptr<protocol::Bytes>>> {
    auto [werr, written] = co_await asio::async_write(*socket_, asio::buffer(frame), asio::as_tuple(asio::use_awaitable));
    if (werr) co_return std::error_code(werr.value(), std::system_category());
    uint32_t prefix = 0;
    auto [serr, n] = co_await asio::async_read(*socket_, asio::buffer(&prefix, 4), asio::as_tuple(asio::use_awaitable));
    if (serr) co_return std::error_code(serr.value(), std::system_category());
    const uint32_t length = ntohl(prefix);
    if (length < 4 || length > kMaxResponseBytes) co_return std::make_error_code(std::errc::bad_message);
    auto body = std::make_shared<protocol::Bytes>(length);
    auto [berr, m] = co_await asio::async_read(*socket_, asio::buffer(*body), asio::as_tuple(asio::use_awaitable));
    if (berr) co_return std::error_code(berr.value(), std::system_category());
    co_return body;
  };
  auto done = co_await (exchange() || timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (done.index() == 1) {
    close();
    co_return std::make_error_code(std::errc::timed_out);
  }
  auto result = std::move(std::get<0>(done));
  if (!result) close();
  co_return result;
}

}  // namespace runnel::replication
