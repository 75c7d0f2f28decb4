// Accepts connections on every configured listener and runs the event loop
// until SIGTERM or SIGINT (or, in tests that host a broker, until stop()).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "broker/asio.h"
#include "broker/broker.h"
#include "broker/connection_quotas.h"

namespace runnel::broker {

// An acceptor listening on host:port (an empty host: every interface;
// port 0: a free port, its local_endpoint's).
tcp::acceptor listen_on(asio::io_context& io, const std::string& host, uint16_t port);

class Server {
 public:
  // Throws ConfigError for connection quotas Kafka would refuse.
  Server(asio::io_context& io, Broker& broker);

  // Binds every listener (port 0 picks a free port, logged and advertised)
  // after building each one's ChannelBuilder; a listener's TLS that cannot
  // be set up (key store, trust store, ...) throws ConfigError first.
  void bind();
  // Runs until a stop signal, then stops gracefully (Broker::begin_shutdown).
  void run();
  // Starts accepting on the bound listeners; the caller runs the io_context.
  void start();
  // The graceful stop a signal triggers: no more accepts, the connections
  // drain, the logs close, and the io_context stops. Runs on the event loop;
  // a second call does nothing.
  void stop();

 private:
  // Failed accepts of one listener, logged once per interval, not once each.
  struct AcceptFailures {
    size_t total = 0;       // since the last accept that succeeded
    size_t unreported = 0;  // since the last line logged
    std::chrono::steady_clock::time_point next_log{};
    void log(const std::string& listener, const error_code& ec);
    void recovered(const std::string& listener);
  };

  struct BoundListener {
    tcp::acceptor acceptor;
    std::string name;
  };

  awaitable<void> accept_loop(BoundListener& listener);
  static awaitable<void> close_after(tcp::socket socket, std::chrono::milliseconds delay);

  asio::io_context& io_;
  Broker& broker_;
  std::vector<BoundListener> listeners_;
  std::shared_ptr<ConnectionQuotas> quotas_;
  bool stopping_ = false;
};

}  // namespace runnel::broker
