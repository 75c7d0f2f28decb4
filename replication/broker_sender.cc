#include "replication/broker_sender.h"

#include <arpa/inet.h>

#include <cstring>

#include "broker/logging.h"
#include "protocol/messages/17_sasl_handshake.h"
#include "protocol/messages/36_sasl_authenticate.h"

namespace runnel::replication {

namespace {

using namespace asio::experimental::awaitable_operators;

// Kafka's socket.request.max.bytes bounds what a broker accepts; a response
// larger than replica.fetch.response.max.bytes plus headroom is refused.
constexpr uint32_t kMaxResponseBytes = 256u << 20;

}  // namespace

BrokerSender::BrokerSender(asio::any_io_executor ex, std::string host, uint16_t port, std::string client_id,
                           std::chrono::milliseconds timeout, std::shared_ptr<asio::ssl::context> tls,
                           bool verify_host, std::optional<security::sasl::SaslCredentials> sasl)
    : ex_(std::move(ex)),
      host_(std::move(host)),
      port_(port),
      client_id_(std::move(client_id)),
      timeout_(timeout),
      tls_(std::move(tls)),
      verify_host_(verify_host),
      sasl_(std::move(sasl)) {}

BrokerSender::~BrokerSender() { close(); }

void BrokerSender::close() {
  if (!transport_) return;
  transport_->close();
  transport_.reset();
  session_expiry_.reset();
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
  if (!tls_) {
    transport_ = std::make_unique<security::PlaintextTransportLayer>(std::move(*socket));
    co_return co_await authenticate();
  }
  auto tls = std::make_unique<security::SslTransportLayer>(std::move(*socket), tls_, verify_host_ ? host_ : "");
  timer.expires_after(timeout_);
  auto handshake = co_await (tls->handshake() || timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  if (handshake.index() == 1) co_return std::make_error_code(std::errc::timed_out);
  if (const std::string& why = std::get<0>(handshake); !why.empty()) {
    RLOG_WARN("TLS handshake with broker %s:%u failed: %s", host_.c_str(), port_, why.c_str());
    co_return std::make_error_code(std::errc::protocol_error);
  }
  transport_ = std::move(tls);
  co_return co_await authenticate();
}

awaitable<std::error_code> BrokerSender::authenticate() {
  if (!sasl_) co_return std::error_code{};
  auto failed = [this](const std::string& why) {
    RLOG_WARN("SASL %s authentication with broker %s:%u failed: %s", sasl_->mechanism.c_str(), host_.c_str(), port_,
              why.c_str());
    close();
    return std::make_error_code(std::errc::permission_denied);
  };
  protocol::SaslHandshakeRequest handshake;
  handshake.mechanism = sasl_->mechanism;
  auto shook = co_await send<protocol::SaslHandshakeApi>(handshake, 1);
  if (!shook) co_return shook.error();
  if (shook->error_code != 0) co_return failed("SaslHandshake answered error " + std::to_string(shook->error_code));
  auto client = security::sasl::create_sasl_client(sasl_->mechanism, sasl_->username, sasl_->password);
  if (!client) co_return failed("no SASL client for this mechanism");
  protocol::SaslAuthenticateRequest request;
  request.auth_bytes = client->initial_response();
  for (;;) {
    // v1: the session lifetime comes back (KIP-368).
    auto answer = co_await send<protocol::SaslAuthenticateApi>(request, 1);
    if (!answer) co_return answer.error();
    if (answer->error_code != 0) co_return failed(answer->error_message.value_or("error " + std::to_string(answer->error_code)));
    auto next = client->evaluate_challenge(answer->auth_bytes);
    if (!next) co_return failed("the broker's SASL challenge did not verify");
    if (client->complete()) {
      // Reconnect at 90% of the lifetime, well before the leader closes
      // the expired session on our next request.
      if (answer->session_lifetime_ms > 0)
        session_expiry_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(answer->session_lifetime_ms * 9 / 10);
      co_return std::error_code{};
    }
    request.auth_bytes = std::move(*next);
  }
}

awaitable<Result<std::shared_ptr<protocol::Bytes>>> BrokerSender::round_trip(protocol::Bytes frame) {
  const uint32_t size = htonl(static_cast<uint32_t>(frame.size() - 4));
  std::memcpy(frame.data(), &size, 4);
  if (transport_ && session_expiry_ && std::chrono::steady_clock::now() >= *session_expiry_) close();
  if (!transport_)
    if (auto ec = co_await connect()) co_return ec;
  asio::steady_timer timer(ex_, timeout_);
  // The whole exchange under one deadline: write, size, body.
  auto exchange = [this, &frame]() -> awaitable<Result<std::shared_ptr<protocol::Bytes>>> {
    boost::system::error_code werr;
    try {
      co_await transport_->write(asio::buffer(frame));
    } catch (const boost::system::system_error& e) {
      werr = e.code();
    }
    if (werr) co_return std::error_code(werr.value(), std::system_category());
    uint32_t prefix = 0;
    if (auto serr = co_await transport_->read(asio::buffer(&prefix, 4)))
      co_return std::error_code(serr.value(), std::system_category());
    const uint32_t length = ntohl(prefix);
    if (length < 4 || length > kMaxResponseBytes) co_return std::make_error_code(std::errc::bad_message);
    auto body = std::make_shared<protocol::Bytes>(length);
    if (auto berr = co_await transport_->read(asio::buffer(*body)))
      co_return std::error_code(berr.value(), std::system_category());
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
