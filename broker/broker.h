// The broker: its configuration, identity and the state handlers act on.
// Everything here is used from the broker's one event-loop thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/asio.h"
#include "broker/config.h"
#include "broker/request_memory.h"

namespace runnel::broker {

class Connection;

class Broker {
 public:
  Broker(asio::io_context& io, BrokerConfig config, std::string cluster_id);

  const BrokerConfig& config() const { return config_; }
  int32_t node_id() const { return node_id_; }
  const std::string& cluster_id() const { return cluster_id_; }
  asio::io_context& io() { return io_; }
  RequestMemory& request_memory() { return request_memory_; }

  // The advertised endpoint clients should use for a listener name.
  const Listener& advertised_listener(const std::string& listener_name) const;

  // Port 0 in a listener binds a free port; the advertised listener of the
  // same name (when it also says 0) then carries the real one.
  void set_bound_port(const std::string& listener_name, uint16_t port);

  void connection_opened(const std::shared_ptr<Connection>& c);
  void connection_closed(const Connection* c);
  size_t connections() const { return connections_.size(); }

  // Graceful stop: every connection stops reading, finishes the request it
  // is serving and sends its queued responses; then `done` runs (bounded by
  // request.timeout.ms, after which connections are closed regardless).
  void begin_shutdown(std::function<void()> done);
  bool stopping() const { return stopping_; }

 private:
  awaitable<void> drain_connections(std::function<void()> done);

  asio::io_context& io_;
  BrokerConfig config_;
  int32_t node_id_;
  std::string cluster_id_;
  std::vector<Listener> advertised_;
  RequestMemory request_memory_;
  std::vector<std::weak_ptr<Connection>> connections_;
  bool stopping_ = false;
};

}  // namespace runnel::broker
