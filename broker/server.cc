#include "broker/server.h"

#include "broker/client_address.h"
#include "broker/connection.h"
#include "broker/logging.h"
#include "broker/quota_managers.h"
#include "broker/listener_channels.h"
#include "security/channel_builder.h"

namespace runnel::broker {

namespace {

constexpr auto kAcceptBackoff = std::chrono::milliseconds(500);
// At most one log line per listener in this period while accepts fail.
constexpr auto kAcceptLogInterval = std::chrono::seconds(10);

bool is_resource_exhaustion(const error_code& ec) {
  return ec == asio::error::no_descriptors /* EMFILE */ || ec == error_code(ENFILE, boost::system::system_category()) ||
         ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
}

}  // namespace

void Server::AcceptFailures::log(const std::string& listener, const error_code& ec) {
  auto now = std::chrono::steady_clock::now();
  ++total;
  ++unreported;
  if (now < next_log) return;
  RLOG_WARN("accept on %s failed: %s (%zu times since the last report)", listener.c_str(), ec.message().c_str(),
            unreported);
  unreported = 0;
  next_log = now + kAcceptLogInterval;
}

void Server::AcceptFailures::recovered(const std::string& listener) {
  if (total == 0) return;
  RLOG_INFO("accepting on %s again after %zu failed accepts", listener.c_str(), total);
  *this = AcceptFailures{};
}

tcp::acceptor listen_on(asio::io_context& io, const std::string& host, uint16_t port) {
  tcp::resolver resolver(io);
  tcp::endpoint ep = resolver.resolve(host.empty() ? std::string("0.0.0.0") : host, std::to_string(port)).begin()->endpoint();
  tcp::acceptor acceptor(io);
  acceptor.open(ep.protocol());
  acceptor.set_option(tcp::acceptor::reuse_address(true));
  acceptor.bind(ep);
  acceptor.listen(asio::socket_base::max_listen_connections);
  return acceptor;
}

Server::Server(asio::io_context& io, Broker& broker)
    : io_(io), broker_(broker), quotas_(std::make_shared<ConnectionQuotas>(broker.config())) {
  check_connection_quotas(broker.config());
}

void Server::bind() {
  ListenerChannels& channels = broker_.listener_channels();
  for (const auto& l : broker_.config().listeners()) {
    auto builder = channels.get(l.name);
    if (l.name == "CONTROLLER") continue;  // a single Runnel node is its own controller
    auto host = l.host.empty() ? std::string("0.0.0.0") : l.host;
    tcp::acceptor acceptor = listen_on(io_, host, l.port);
    uint16_t port = acceptor.local_endpoint().port();
    broker_.set_bound_port(l.name, port);
    RLOG_INFO("listening on %s://%s:%u (%s)", l.name.c_str(), host.c_str(), port,
              builder->security_protocol().c_str());
    if (builder->security_protocol() == "SSL")
      RLOG_INFO("listener %s: %s", l.name.c_str(), security::SslTransportLayer::fetch_path().c_str());
    listeners_.push_back({std::move(acceptor), l.name});
  }
}

// A connection over its ip's connection_creation_rate, held open unread
// for its throttle time and then closed, as Kafka's acceptor does: a
// client reconnecting at once would otherwise spin.
awaitable<void> Server::close_after(tcp::socket socket, std::chrono::milliseconds delay) {
  asio::steady_timer timer(co_await asio::this_coro::executor);
  timer.expires_after(delay);
  co_await timer.async_wait(as_tuple_awaitable);
  error_code ignored;
  socket.close(ignored);
}

awaitable<void> Server::accept_loop(BoundListener& listener) {
  tcp::acceptor& acceptor = listener.acceptor;
  const std::string& listener_name = listener.name;
  asio::steady_timer backoff(io_);
  AcceptFailures failures;
  for (;;) {
    co_await quotas_->wait_to_accept(listener_name);
    auto [ec, socket] = co_await acceptor.async_accept(as_tuple_awaitable);
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) co_return;
    if (ec) {
      failures.log(listener_name, ec);
      // Out of descriptors or kernel memory, the connection stays in the
      // listen backlog and the next accept fails at once: without a pause
      // the loop spins. Kafka's acceptor polls every 500 ms; so do we until
      // a descriptor is free again.
      if (is_resource_exhaustion(ec)) {
        backoff.expires_after(kAcceptBackoff);
        co_await backoff.async_wait(as_tuple_awaitable);
      }
      continue;
    }
    failures.recovered(listener_name);
    error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    const std::string address = peer_ec ? std::string("unknown") : java_host_address(peer.address());
    QuotaManagers& client_quotas = broker_.quotas();
    if (auto throttle = quotas_->ip_throttle_ms(listener_name, address, client_quotas.connection_rate_for_ip(address),
                                               client_quotas.window(), QuotaManagers::now_ms())) {
      RLOG_DEBUG("Delaying closing of connection from /%s for %lld ms", address.c_str(),
                 static_cast<long long>(*throttle));
      asio::co_spawn(io_, close_after(std::move(socket), std::chrono::milliseconds(*throttle)), asio::detached);
      continue;
    }
    auto slot = quotas_->admit(listener_name, address);
    if (!slot) {
      RLOG_INFO("Rejected connection from /%s, address already has the configured maximum of %lld connections.",
                address.c_str(), static_cast<long long>(quotas_->max_for_address(address)));
      error_code ignored;
      socket.close(ignored);
      continue;
    }
    // The inter-broker listener past the broker-wide limit: another
    // listener's least recently active connection makes room, as in Kafka.
    if (quotas_->over_broker_limit() && quotas_->is_inter_broker(listener_name))
      broker_.close_least_recent_connection(listener_name);
    // The listener's builder now: a dynamic key store update serves the
    // connections accepted after it.
    auto connection = std::make_shared<Connection>(std::move(socket), broker_, listener_name,
                                                   broker_.listener_channels().get(listener_name));
    connection->hold(std::move(*slot));
    connection->start();
  }
}

void Server::start() {
  for (auto& l : listeners_) asio::co_spawn(io_, accept_loop(l), asio::detached);
}

void Server::stop() {
  if (stopping_) return;
  stopping_ = true;
  for (auto& l : listeners_) {
    error_code ignored;
    l.acceptor.close(ignored);
  }
  broker_.begin_shutdown([this] { io_.stop(); });
}

void Server::run() {
  start();
  asio::signal_set signals(io_, SIGINT, SIGTERM);
  signals.async_wait([&](const error_code& ec, int sig) {
    if (ec) return;
    RLOG_INFO("received signal %d: shutting down", sig);
    stop();
  });
  io_.run();
}

}  // namespace runnel::broker
