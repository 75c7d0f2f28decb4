#include "broker/broker.h"

#include <algorithm>

#include "broker/connection.h"

namespace runnel::broker {

Broker::Broker(asio::io_context& io, BrokerConfig config, std::string cluster_id)
    : io_(io),
      config_(std::move(config)),
      node_id_(config_.node_id()),
      cluster_id_(std::move(cluster_id)),
      advertised_(config_.advertised_listeners()),
      request_memory_(io.get_executor(),
                      config_.get_long("queued.max.request.bytes") > 0
                          ? static_cast<size_t>(config_.get_long("queued.max.request.bytes"))
                          : 0) {}

const Listener& Broker::advertised_listener(const std::string& listener_name) const {
  for (const auto& l : advertised_)
    if (l.name == listener_name) return l;
  return advertised_.front();
}

void Broker::set_bound_port(const std::string& listener_name, uint16_t port) {
  for (auto& l : advertised_)
    if (l.name == listener_name && l.port == 0) l.port = port;
}

void Broker::connection_opened(const std::shared_ptr<Connection>& c) { connections_.push_back(c); }

void Broker::connection_closed(const Connection* c) {
  std::erase_if(connections_, [c](const std::weak_ptr<Connection>& w) {
    auto s = w.lock();
    return !s || s.get() == c;
  });
}

void Broker::begin_shutdown(std::function<void()> done) {
  stopping_ = true;
  for (auto& w : connections_)
    if (auto c = w.lock()) c->stop_reading();
  asio::co_spawn(io_, drain_connections(std::move(done)), asio::detached);
}

awaitable<void> Broker::drain_connections(std::function<void()> done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.get_int("request.timeout.ms"));
  asio::steady_timer timer(io_);
  for (;;) {
    std::erase_if(connections_, [](const std::weak_ptr<Connection>& w) { return w.expired(); });
    if (connections_.empty() || std::chrono::steady_clock::now() >= deadline) break;
    timer.expires_after(std::chrono::milliseconds(10));
    co_await timer.async_wait(as_tuple_awaitable);
  }
  for (auto& w : connections_)
    if (auto c = w.lock()) c->close();
  done();
}

}  // namespace runnel::broker
