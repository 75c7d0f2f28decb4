#include "base/ids.h"

#include <catch2/catch.hpp>
#include <type_traits>
#include <unordered_set>

#include "base/clock.h"

using namespace runnel;

TEST_CASE("strong ids do not convert into one another or from plain integers") {
  STATIC_REQUIRE_FALSE(std::is_convertible_v<int32_t, NodeId>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<NodeId, PartitionId>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<LeaderEpoch, int32_t>);
  STATIC_REQUIRE_FALSE(std::is_convertible_v<int64_t, Offset>);
  STATIC_REQUIRE(std::is_constructible_v<NodeId, int32_t>);
}

TEST_CASE("ids compare and hash by value") {
  REQUIRE(NodeId(1) < NodeId(2));
  REQUIRE(LeaderEpoch(3) == LeaderEpoch(3));
  REQUIRE(kNoNode.value() == -1);
  std::unordered_set<PartitionId> set{PartitionId(0), PartitionId(1), PartitionId(0)};
  REQUIRE(set.size() == 2);
}

TEST_CASE("offsets take arithmetic with record counts") {
  Offset o(10);
  REQUIRE((o + 5).value() == 15);
  REQUIRE(Offset(15) - o == 5);
  o += 2;
  REQUIRE(o == Offset(12));
  REQUIRE(kUnknownOffset < Offset(0));
}

TEST_CASE("a manual clock moves only when told") {
  ManualClock clock(1000, 5);
  REQUIRE(clock.wall_ms() == 1000);
  clock.advance(250);
  REQUIRE(clock.wall_ms() == 1250);
  REQUIRE(clock.steady_ms() == 255);
  REQUIRE(Clock::system().wall_ms() > 1'600'000'000'000);
}
