// TlsStream through SslTransportLayer: a server and a client over a real
// loopback socket pair, on one io_context as in the broker.
#include <catch2/catch.hpp>
#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include <boost/asio/ssl/error.hpp>

#include "security/ssl_test_support.h"
#include "security/transport_layer.h"

using namespace runnel::security;
using namespace runnel::security::testing;
using runnel::broker::as_tuple_awaitable;

namespace {

std::shared_ptr<asio::ssl::context> server_context(const TestIdentity& id) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  REQUIRE(SSL_CTX_use_certificate(context->native_handle(), id.cert) == 1);
  REQUIRE(SSL_CTX_use_PrivateKey(context->native_handle(), id.key) == 1);
  return context;
}

std::shared_ptr<asio::ssl::context> client_context(const TestIdentity& trusted) {
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_client);
  REQUIRE(X509_STORE_add_cert(SSL_CTX_get_cert_store(context->native_handle()), trusted.cert) == 1);
  SSL_CTX_set_verify(context->native_handle(), SSL_VERIFY_PEER, nullptr);
  return context;
}

// Runs `task` on `io` to its end, within a bound.
template <typename T>
T run_bounded(asio::io_context& io, asio::awaitable<T> task) {
  auto done = asio::co_spawn(io, std::move(task), asio::use_future);
  io.restart();
  io.run_for(std::chrono::seconds(30));
  REQUIRE(done.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  return done.get();
}

// A connected server and client, the client checking the address 127.0.0.1.
struct Pair {
  asio::io_context io;
  std::unique_ptr<SslTransportLayer> server, client;
  Pair(const TestIdentity& id, const TestIdentity& trusted) {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    tcp::socket c(io);
    c.connect(acceptor.local_endpoint());
    tcp::socket s = acceptor.accept();
    server = std::make_unique<SslTransportLayer>(std::move(s), server_context(id));
    client = std::make_unique<SslTransportLayer>(std::move(c), client_context(trusted), "127.0.0.1");
  }
  // Runs `task` to its end, within a bound.
  template <typename T>
  T run(asio::awaitable<T> task) {
    return run_bounded(io, std::move(task));
  }
  // Both handshakes, the server's and the client's answers.
  std::pair<std::string, std::string> handshake() {
    auto both = [this]() -> asio::awaitable<std::pair<std::string, std::string>> {
      using namespace asio::experimental::awaitable_operators;
      auto [s, c] = co_await (server->handshake() && client->handshake());
      co_return std::make_pair(s, c);
    };
    return run(both());
  }
};

std::vector<uint8_t> pattern(size_t size, uint8_t seed) {
  std::vector<uint8_t> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 31 + seed + (i >> 12));
  return bytes;
}

const TestIdentity& broker_identity() {
  static TestIdentity id("localhost", "IP:127.0.0.1");
  return id;
}

}  // namespace

TEST_CASE("TLS stream: a handshake then a large write read back intact", "[security][tls_stream]") {
  Pair p(broker_identity(), broker_identity());
  REQUIRE(p.handshake() == std::make_pair(std::string(), std::string()));
  const auto sent = pattern(6 * 1024 * 1024 + 123, 7);
  std::vector<uint8_t> got(sent.size());
  auto transfer = [&]() -> asio::awaitable<runnel::broker::error_code> {
    using namespace asio::experimental::awaitable_operators;
    co_return co_await (p.server->write(asio::buffer(sent)) && p.client->read(asio::buffer(got)));
  };
  REQUIRE(!p.run(transfer()));
  REQUIRE(got == sent);
  REQUIRE(!p.client->bytes_waiting());
  REQUIRE(p.client->peer_subject() == "CN=localhost,O=Runnel,C=US");
}

TEST_CASE("TLS stream: one read and one write pending at once on each side", "[security][tls_stream]") {
  Pair p(broker_identity(), broker_identity());
  REQUIRE(p.handshake() == std::make_pair(std::string(), std::string()));
  // Each side writes 4 MiB while it reads the other's 4 MiB: neither could
  // finish if a write had to end before the read could run.
  const auto to_client = pattern(4 * 1024 * 1024, 1), to_server = pattern(4 * 1024 * 1024 + 5, 2);
  std::vector<uint8_t> at_client(to_client.size()), at_server(to_server.size());
  auto both = [&]() -> asio::awaitable<bool> {
    using namespace asio::experimental::awaitable_operators;
    auto [e1, e2] =
        co_await (p.server->write(asio::buffer(to_client)) && p.client->write(asio::buffer(to_server)) &&
                  p.client->read(asio::buffer(at_client)) && p.server->read(asio::buffer(at_server)));
    co_return !e1 && !e2;
  };
  REQUIRE(p.run(both()));
  REQUIRE(at_client == to_client);
  REQUIRE(at_server == to_server);
}

TEST_CASE("TLS stream: the peer sees the close_notify of close", "[security][tls_stream]") {
  Pair p(broker_identity(), broker_identity());
  REQUIRE(p.handshake() == std::make_pair(std::string(), std::string()));
  uint8_t byte = 0;
  auto closed = [&]() -> asio::awaitable<runnel::broker::error_code> {
    p.server->close();
    co_return co_await p.client->read(asio::buffer(&byte, 1));
  };
  // eof is the close_notify; a bare TCP close reads as stream_truncated.
  REQUIRE(p.run(closed()) == asio::error::eof);
}

TEST_CASE("TLS stream: a socket closed without close_notify reads as truncated", "[security][tls_stream]") {
  Pair p(broker_identity(), broker_identity());
  REQUIRE(p.handshake() == std::make_pair(std::string(), std::string()));
  uint8_t byte = 0;
  auto truncated = [&]() -> asio::awaitable<runnel::broker::error_code> {
    p.server->socket().close();
    co_return co_await p.client->read(asio::buffer(&byte, 1));
  };
  REQUIRE(p.run(truncated()) == asio::ssl::error::stream_truncated);
}

TEST_CASE("TLS stream: a handshake with a certificate from an unknown CA is refused", "[security][tls_stream]") {
  TestIdentity stranger("stranger", "IP:127.0.0.1");
  Pair p(stranger, broker_identity());
  auto [server_why, client_why] = p.handshake();
  INFO(client_why);
  REQUIRE(client_why.find("certificate verify failed (SSL routines): ") != std::string::npos);
  // The client's alert reached the server and ended its handshake too.
  INFO(server_why);
  REQUIRE(server_why.find("alert") != std::string::npos);
}

TEST_CASE("TLS stream: the client checks the server's address", "[security][tls_stream]") {
  TestIdentity elsewhere("elsewhere", "IP:10.1.2.3");
  Pair p(elsewhere, elsewhere);
  auto [server_why, client_why] = p.handshake();
  INFO(client_why);
  REQUIRE(client_why.find(": IP address mismatch") != std::string::npos);
}

// A TLS 1.3 KeyUpdate that arrives while the other side has a write in
// flight: the receiver's SSL_read must answer it (an update_requested
// KeyUpdate goes out) while its suspended write still holds records under
// the old key, and neither direction may lose or reorder a byte.
namespace {

struct RawPair {
  asio::io_context io;
  tcp::socket s{io}, c{io};
  std::shared_ptr<asio::ssl::context> sctx, cctx;
  std::unique_ptr<TlsStream> server, client;
  RawPair() {
    tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    c.connect(acceptor.local_endpoint());
    s = acceptor.accept();
    sctx = server_context(broker_identity());
    cctx = client_context(broker_identity());
    server = std::make_unique<TlsStream>(s, sctx->native_handle(), TlsStream::Side::server);
    client = std::make_unique<TlsStream>(c, cctx->native_handle(), TlsStream::Side::client);
  }
  template <typename T>
  T run(asio::awaitable<T> task) {
    return run_bounded(io, std::move(task));
  }
};

// The KeyUpdate messages one SSL received and sent (OpenSSL's message
// callback), and whether the big write had ended when it sent one.
struct KeyUpdates {
  const bool* big_written = nullptr;
  int received = 0, sent = 0, sent_after_big = 0;
};

void count_key_updates(int write_p, int, int content_type, const void* buf, size_t len, SSL*, void* arg) {
  if (content_type != SSL3_RT_HANDSHAKE || len == 0 || *static_cast<const uint8_t*>(buf) != SSL3_MT_KEY_UPDATE)
    return;
  auto* k = static_cast<KeyUpdates*>(arg);
  if (!write_p) {
    ++k->received;
  } else {
    ++k->sent;
    if (*k->big_written) ++k->sent_after_big;
  }
}

// `updater` requests a key update while `writer` sends `big` that nobody
// reads yet; then both directions carry more data.
void key_update_during_write(RawPair& p, TlsStream& writer, TlsStream& updater) {
  const auto big = pattern(48 * 1024 * 1024 + 77, 3), small = pattern(1000, 4);
  const auto after_w = pattern(300 * 1024 + 1, 5), after_u = pattern(200 * 1024 + 3, 6);
  std::vector<uint8_t> got_big(big.size()), got_small(small.size());
  std::vector<uint8_t> got_after_w(after_w.size()), got_after_u(after_u.size());
  auto steps = [&]() -> asio::awaitable<bool> {
    using namespace asio::experimental::awaitable_operators;
    auto [hs, hc] = co_await (writer.handshake() && updater.handshake());
    if (hs || hc) co_return false;
    REQUIRE(SSL_version(updater.native_handle()) == TLS1_3_VERSION);
    // More than loopback's socket buffers hold: the write is still sending
    // when the KeyUpdate comes.
    bool big_written = false;
    KeyUpdates seen;
    seen.big_written = &big_written;
    SSL_set_msg_callback(writer.native_handle(), count_key_updates);
    SSL_set_msg_callback_arg(writer.native_handle(), &seen);
    auto big_write = [&]() -> asio::awaitable<void> {
      co_await writer.write(asio::buffer(big));
      big_written = true;
    };
    auto update_then_send = [&]() -> asio::awaitable<runnel::broker::error_code> {
      // Let the big write fill the socket buffers and suspend first.
      asio::steady_timer t(p.io, std::chrono::milliseconds(200));
      co_await t.async_wait(asio::use_awaitable);
      REQUIRE(!big_written);
      REQUIRE(SSL_key_update(updater.native_handle(), SSL_KEY_UPDATE_REQUESTED) == 1);
      co_await updater.write(asio::buffer(small));  // the KeyUpdate goes first
      // The writer reads it (and answers the update) while its write waits.
      auto e = co_await writer.read(asio::buffer(got_small));
      if (e) co_return e;
      REQUIRE(!big_written);
      co_return co_await updater.read(asio::buffer(got_big));
    };
    auto e1 = co_await (big_write() && update_then_send());
    if (e1) co_return false;
    // The writer got the request and answered it while its write was still
    // sending: the rest of that write went under its new key.
    REQUIRE(seen.received == 1);
    REQUIRE(seen.sent == 1);
    REQUIRE(seen.sent_after_big == 0);
    auto [e2, e3] = co_await (writer.write(asio::buffer(after_w)) && updater.write(asio::buffer(after_u)) &&
                              updater.read(asio::buffer(got_after_w)) && writer.read(asio::buffer(got_after_u)));
    co_return !e2 && !e3;
  };
  REQUIRE(p.run(steps()));
  REQUIRE(got_small == small);
  REQUIRE(got_big == big);
  REQUIRE(got_after_w == after_w);
  REQUIRE(got_after_u == after_u);
}

}  // namespace

TEST_CASE("TLS stream: a KeyUpdate from the client while the server's large write is pending", "[security][tls_stream]") {
  RawPair p;
  key_update_during_write(p, *p.server, *p.client);
}

TEST_CASE("TLS stream: a KeyUpdate from the server while the client's large write is pending", "[security][tls_stream]") {
  RawPair p;
  key_update_during_write(p, *p.client, *p.server);
}
