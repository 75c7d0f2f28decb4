#include "broker/client_address.h"

#include <catch2/catch.hpp>

namespace runnel::broker {
namespace {

std::string java(const char* text) { return java_host_address(asio::ip::make_address(text)); }

TEST_CASE("client addresses are written as Java's getHostAddress writes them", "[broker]") {
  CHECK(java("127.0.0.1") == "127.0.0.1");
  CHECK(java("10.0.12.7") == "10.0.12.7");
  CHECK(java("::1") == "0:0:0:0:0:0:0:1");
  CHECK(java("::") == "0:0:0:0:0:0:0:0");
  CHECK(java("2001:db8::ff00:42:8329") == "2001:db8:0:0:0:ff00:42:8329");
  CHECK(java("2001:0DB8:0000:0000:0000:0000:0000:0001") == "2001:db8:0:0:0:0:0:1");
  CHECK(java("::ffff:192.168.1.20") == "192.168.1.20");  // Java's Inet4Address for a mapped address
  auto scoped = asio::ip::make_address_v6("fe80::1");
  scoped.scope_id(3);
  CHECK(java_host_address(scoped) == "fe80:0:0:0:0:0:0:1%3");
}

}  // namespace
}  // namespace runnel::broker
