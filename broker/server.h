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
  // Runs until a stop signal; `on_stop` runs on the event loop once
  // accepting has stopped, to flush and close the logs.
  void run(std::function<void()> on_stop);

 private:
  awaitable<void> accept_loop(tcp::acceptor& acceptor, std::string listener_name);

  asio::io_context& io_;
  Broker& broker_;
  std::vector<std::pair<tcp::acceptor, std::string>> acceptors_;
};

}  // namespace runnel::broker
