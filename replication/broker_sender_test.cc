// The broker-to-broker sender against a real broker in the process, and
// against peers that refuse, never answer, or answer garbage.
#include "replication/broker_sender.h"

#include <catch2/catch.hpp>

#include "broker/testing/broker_fixture.h"
#include "protocol/messages/03_metadata.h"
#include "protocol/messages/18_api_versions.h"

using namespace runnel;
using namespace runnel::replication;
using namespace std::chrono_literals;
namespace p = runnel::protocol;

namespace {

// Runs `a` on a loop of its own, bounded.
template <typename T>
T run(asio::io_context& io, awaitable<T> a) {
  std::optional<T> out;
  asio::co_spawn(io, [&]() -> awaitable<void> { out.emplace(co_await std::move(a)); }, asio::detached);
  io.run_for(20s);
  REQUIRE(out.has_value());
  return std::move(*out);
}

// A listener on a free loopback port that accepts and then does `behave`.
struct FakePeer {
  asio::io_context& io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  uint16_t port() const { return acceptor.local_endpoint().port(); }
};

}  // namespace

TEST_CASE("a sender's requests are answered by a broker, several on one connection", "[in_process]") {
  broker::testing::BrokerFixture broker;
  asio::io_context io;
  BrokerSender sender(io.get_executor(), "127.0.0.1", broker.port(), "runnel-replica-fetcher", 10s);
  p::ApiVersionsRequest hello;
  hello.client_software_name = "runnel";
  hello.client_software_version = "1.0";
  auto versions = run(io, sender.send<p::ApiVersionsApi>(hello, 3));
  REQUIRE(versions);
  CHECK(versions->error_code == 0);
  CHECK_FALSE(versions->api_keys.empty());
  io.restart();
  auto metadata = run(io, sender.send<p::MetadataApi>(p::MetadataRequest{}, 12));
  REQUIRE(metadata);
  REQUIRE(metadata->brokers.size() == 1);
  CHECK(metadata->brokers[0].port == broker.port());
}

TEST_CASE("a sender fails on a refused connection and on a silent peer, within its timeout", "[in_process]") {
  asio::io_context io;
  uint16_t closed_port;
  {
    FakePeer gone{io};
    closed_port = gone.port();
  }
  BrokerSender refused(io.get_executor(), "127.0.0.1", closed_port, "t", 2s);
  CHECK_FALSE(run(io, refused.send<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 3)));

  FakePeer silent{io};  // accepts (the kernel's backlog) and never answers
  BrokerSender waiting(io.get_executor(), "127.0.0.1", silent.port(), "t", 300ms);
  io.restart();
  const auto started = std::chrono::steady_clock::now();
  auto r = run(io, waiting.send<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 3));
  REQUIRE_FALSE(r);
  CHECK(r.error() == std::errc::timed_out);
  CHECK(std::chrono::steady_clock::now() - started < 10s);
}

TEST_CASE("a response that is not the request's is an error, and the connection is dropped", "[in_process]") {
  asio::io_context io;
  FakePeer peer{io};
  tcp::socket accepted(io);
  // Answers any request with a frame of the wrong correlation id.
  peer.acceptor.async_accept(accepted, [&](boost::system::error_code ec) {
    if (ec) return;
    static uint8_t frame[] = {0, 0, 0, 4, 0x7f, 0, 0, 0};
    auto request = std::make_shared<std::array<uint8_t, 512>>();
    accepted.async_read_some(asio::buffer(*request), [&, request](boost::system::error_code, size_t) {
      asio::async_write(accepted, asio::buffer(frame), [](boost::system::error_code, size_t) {});
    });
  });
  BrokerSender sender(io.get_executor(), "127.0.0.1", peer.port(), "t", 2s);
  auto r = run(io, sender.send<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 3));
  REQUIRE_FALSE(r);
  CHECK(r.error() == std::errc::bad_message);
}
