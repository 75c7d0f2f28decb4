#include "broker/server.h"

#include "broker/connection.h"
#include "broker/logging.h"

namespace runnel::broker {

Server::Server(asio::io_context& io, Broker& broker) : io_(io), broker_(broker) {}

void Server::bind() {
  for (const auto& l : broker_.config().listeners()) {
    if (l.name == "CONTROLLER") continue;  // a single Runnel node is its own controller
    tcp::resolver resolver(io_);
    auto host = l.host.empty() ? std::string("0.0.0.0") : l.host;
    auto results = resolver.resolve(host, std::to_string(l.port));
    tcp::endpoint ep = results.begin()->endpoint();
    tcp::acceptor acceptor(io_);
    acceptor.open(ep.protocol());
    acceptor.set_option(tcp::acceptor::reuse_address(true));
    acceptor.bind(ep);
    acceptor.listen(asio::socket_base::max_listen_connections);
    uint16_t port = acceptor.local_endpoint().port();
    broker_.set_bound_port(l.name, port);
    RLOG_INFO("listening on %s://%s:%u", l.name.c_str(), host.c_str(), port);
    acceptors_.emplace_back(std::move(acceptor), l.name);
  }
}

awaitable<void> Server::accept_loop(tcp::acceptor& acceptor, std::string listener_name) {
  for (;;) {
    auto [ec, socket] = co_await acceptor.async_accept(as_tuple_awaitable);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      RLOG_WARN("accept on %s failed: %s", listener_name.c_str(), ec.message().c_str());
      continue;
    }
    std::make_shared<Connection>(std::move(socket), broker_, listener_name)->start();
  }
}

void Server::run() {
  for (auto& [acceptor, name] : acceptors_) asio::co_spawn(io_, accept_loop(acceptor, name), asio::detached);
  asio::signal_set signals(io_, SIGINT, SIGTERM);
  signals.async_wait([&](const error_code& ec, int sig) {
    if (ec) return;
    RLOG_INFO("received signal %d: shutting down", sig);
    for (auto& [acceptor, name] : acceptors_) {
      error_code ignored;
      acceptor.close(ignored);
    }
    broker_.begin_shutdown([this] { io_.stop(); });
  });
  io_.run();
}

}  // namespace runnel::broker
