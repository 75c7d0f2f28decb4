#include "broker/connection_quotas.h"

#include <catch2/catch.hpp>

namespace runnel::broker {
namespace {

using namespace std::chrono_literals;
using Clock = CreationRate::Clock;

TEST_CASE("max.connections.per.ip.overrides parses host:count entries", "[broker][connection-quotas]") {
  CHECK(parse_connection_overrides("").empty());
  auto o = parse_connection_overrides("127.0.0.2:1, 10.0.0.7:0 ,::1:4");
  CHECK(o.size() == 3);
  CHECK(o.at("127.0.0.2") == 1);
  CHECK(o.at("10.0.0.7") == 0);
  CHECK(o.at("0:0:0:0:0:0:0:1") == 4);  // keyed as Java writes the address, as peers are
  CHECK(parse_connection_overrides("localhost:3").count("127.0.0.1") == 1);  // a name resolves now
  CHECK_THROWS_AS(parse_connection_overrides("127.0.0.1"), ConfigError);
  CHECK_THROWS_AS(parse_connection_overrides("127.0.0.1:x"), ConfigError);
  CHECK_THROWS_AS(parse_connection_overrides("127.0.0.1:-1"), ConfigError);
  CHECK_THROWS_AS(parse_connection_overrides(":3"), ConfigError);
}

TEST_CASE("max.connections.per.ip=0 needs overrides, as Kafka requires", "[broker][connection-quotas]") {
  CHECK_THROWS_WITH(check_connection_quotas(BrokerConfig::from({{"node.id", "1"}, {"max.connections.per.ip", "0"}})),
                    Catch::Contains("max.connections.per.ip can be set to zero only if "
                                    "max.connections.per.ip.overrides property is set."));
  CHECK_NOTHROW(check_connection_quotas(BrokerConfig::from(
      {{"node.id", "1"}, {"max.connections.per.ip", "0"}, {"max.connections.per.ip.overrides", "127.0.0.1:2"}})));
  CHECK_NOTHROW(check_connection_quotas(BrokerConfig::from({{"node.id", "1"}})));
}

TEST_CASE("the creation rate admits a second's burst, then the rate", "[broker][connection-quotas]") {
  CreationRate r;
  const auto t0 = Clock::time_point{} + 100s;
  for (int i = 0; i < 4; ++i) CHECK(r.take(4, t0) == Clock::duration::zero());
  const auto wait = r.take(4, t0);
  CHECK(wait > 240ms);  // a quarter second per connection at 4/s
  CHECK(wait <= 250ms);
  CHECK(r.take(4, t0 + 250ms) == Clock::duration::zero());
  CHECK(r.take(4, t0 + 250ms) != Clock::duration::zero());
  // Idle for long, the bucket holds one second's worth, not more.
  const auto later = t0 + 3600s;
  for (int i = 0; i < 4; ++i) CHECK(r.take(4, later) == Clock::duration::zero());
  CHECK(r.take(4, later) != Clock::duration::zero());
}

TEST_CASE("the creation rate: a token given back is taken again; no limit is free", "[broker][connection-quotas]") {
  CreationRate r;
  const auto t0 = Clock::time_point{} + 100s;
  CHECK(r.take(1, t0) == Clock::duration::zero());
  CHECK(r.take(1, t0) != Clock::duration::zero());
  r.give_back();
  CHECK(r.take(1, t0) == Clock::duration::zero());
  CreationRate unlimited;
  for (int i = 0; i < 1000; ++i) CHECK(unlimited.take(INT32_MAX, t0) == Clock::duration::zero());
  CreationRate zero;
  CHECK(zero.take(0, t0) != Clock::duration::zero());
}

TEST_CASE("connections per address are counted until their slot goes", "[broker][connection-quotas]") {
  auto config = BrokerConfig::from({{"node.id", "1"},
                                    {"max.connections.per.ip", "2"},
                                    {"max.connections.per.ip.overrides", "127.0.0.2:1"}});
  auto quotas = std::make_shared<ConnectionQuotas>(config);
  auto a = quotas->admit("PLAINTEXT", "127.0.0.1");
  auto b = quotas->admit("PLAINTEXT", "127.0.0.1");
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(quotas->admit("PLAINTEXT", "127.0.0.1"));
  CHECK(quotas->max_for_address("127.0.0.2") == 1);
  auto c = quotas->admit("PLAINTEXT", "127.0.0.2");
  REQUIRE(c);
  CHECK_FALSE(quotas->admit("PLAINTEXT", "127.0.0.2"));
  a->reset();
  CHECK(quotas->admit("PLAINTEXT", "127.0.0.1"));  // admitted and at once released again
  ConnectionQuotas::Slot moved = std::move(*b);
  CHECK(quotas->admit("PLAINTEXT", "127.0.0.1"));  // moving a slot neither frees nor doubles it
  auto held = quotas->admit("PLAINTEXT", "127.0.0.1");
  REQUIRE(held);
  CHECK_FALSE(quotas->admit("PLAINTEXT", "127.0.0.1"));
}

}  // namespace
}  // namespace runnel::broker
