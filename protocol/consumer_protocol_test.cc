#include "protocol/consumer_protocol.h"

#include <catch2/catch.hpp>

using namespace runnel::protocol;

TEST_CASE("the range assignor gives the first members one more, in member order") {
  std::map<std::string, Subscription> members = {{"m-b", {{"t"}}}, {"m-a", {{"t", "u"}}}, {"m-c", {{"t"}}}};
  auto a = range_assign(members, {{"t", 7}, {"u", 2}});
  // 7 partitions over 3 members: 3, 2, 2 in sorted member order.
  CHECK(a["m-a"]["t"] == std::vector<int32_t>{0, 1, 2});
  CHECK(a["m-b"]["t"] == std::vector<int32_t>{3, 4});
  CHECK(a["m-c"]["t"] == std::vector<int32_t>{5, 6});
  // Only m-a subscribes to u.
  CHECK(a["m-a"]["u"] == std::vector<int32_t>{0, 1});
  CHECK(a["m-b"].count("u") == 0);
}

TEST_CASE("more members than partitions: the last ones get nothing") {
  std::map<std::string, Subscription> members = {{"1", {{"t"}}}, {"2", {{"t"}}}, {"3", {{"t"}}}};
  auto a = range_assign(members, {{"t", 2}});
  CHECK(a["1"]["t"] == std::vector<int32_t>{0});
  CHECK(a["2"]["t"] == std::vector<int32_t>{1});
  CHECK(a["3"].empty());
}

TEST_CASE("subscriptions and assignments round-trip in the consumer protocol's bytes") {
  auto bytes = encode_subscription({{"orders"}});
  // version 0, one topic "orders", null user data.
  runnel::protocol::Bytes expected = {0, 0, 0, 0, 0, 1, 0, 6, 'o', 'r', 'd', 'e', 'r', 's', 0xff, 0xff, 0xff, 0xff};
  CHECK(bytes == expected);
  auto s = decode_subscription(bytes);
  REQUIRE(s);
  CHECK(s->topics == std::vector<std::string>{"orders"});

  Assignment a = {{"orders", {0, 2}}};
  auto back = decode_assignment(encode_assignment(a));
  REQUIRE(back);
  CHECK(*back == a);
  CHECK(decode_assignment({})->empty());
  runnel::protocol::Bytes truncated = {0, 0, 0, 0, 0, 1, 0, 6, 'o'};
  CHECK_FALSE(decode_assignment(truncated));
}
