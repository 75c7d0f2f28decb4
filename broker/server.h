// Accepts connections on every configured listener and runs the event loop
// until SIGTERM or SIGINT.
#pragma once

#include <functional>
#include <vector>

#include "broker/asio.h"
#include "broker/broker.h"

namespace runnel::broker {

class Server {
 public:
  Server(asio::io_context& io, Broker& broker);

  // Binds every listener (port 0 picks a free port, logged and advertised).
  void bind();
  // Runs until a stop signal, then stops gracefully (Broker::begin_shutdown).
  void run();

 private:
  awaitable<void> accept_loop(tcp::acceptor& acceptor, std::string listener_name);

  asio::io_context& io_;
  Broker& broker_;
  std::vector<std::pair<tcp::acceptor, std::string>> acceptors_;
};

}  // namespace runnel::broker
