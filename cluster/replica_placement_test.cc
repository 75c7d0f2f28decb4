#include "cluster/replica_placement.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "cluster/testing/node_ids.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::ids;

TEST_CASE("partition i leads on broker i mod n of the sorted live brokers, further replicas follow in order") {
  Placement p = place_replicas(ids({3, 1, 2}), 0, 4, 3);
  REQUIRE_FALSE(p.error);
  REQUIRE(p.replicas.size() == 4);
  CHECK(p.replicas[0] == ids({1, 2, 3}));
  CHECK(p.replicas[1] == ids({2, 3, 1}));
  CHECK(p.replicas[2] == ids({3, 1, 2}));
  CHECK(p.replicas[3] == ids({1, 2, 3}));
}

TEST_CASE("added partitions continue the rule from their own index") {
  Placement p = place_replicas(ids({1, 2, 3}), 4, 2, 2);
  REQUIRE_FALSE(p.error);
  CHECK(p.replicas[0] == ids({2, 3}));
  CHECK(p.replicas[1] == ids({3, 1}));
}

TEST_CASE("preferred leaders spread evenly across brokers") {
  Placement p = place_replicas(ids({10, 20, 30}), 0, 30, 2);
  std::map<NodeId, int> leaders;
  for (auto& r : p.replicas) ++leaders[r.front()];
  CHECK(leaders == std::map<NodeId, int>{{NodeId(10), 10}, {NodeId(20), 10}, {NodeId(30), 10}});
  for (auto& r : p.replicas) CHECK(r[0] != r[1]);
}

TEST_CASE("a factor above the live brokers is Kafka's INVALID_REPLICATION_FACTOR message") {
  Placement p = place_replicas(ids({1}), 0, 1, 3);
  REQUIRE(p.error);
  CHECK(p.error->message ==
        "Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because "
        "only 1 broker(s) are registered.");
  CHECK(place_replicas(ids({1, 2}), 0, 1, 0).error);
}

TEST_CASE("with every broker in a rack, a partition's replicas span as many racks as they can") {
  // Racks a: 1, 4; b: 2, 5; c: 3, 6 -- alternated: 1 2 3 4 5 6 (by rack, then in turn).
  std::vector<RackedBroker> brokers{{NodeId(1), "a"}, {NodeId(2), "b"}, {NodeId(3), "c"},
                                    {NodeId(4), "a"}, {NodeId(5), "b"}, {NodeId(6), "c"}};
  auto placed = place_replicas(brokers, 0, 6, 3);
  REQUIRE_FALSE(placed.error);
  std::map<NodeId, std::string> rack;
  for (const auto& b : brokers) rack[b.id] = *b.rack;
  for (const auto& r : placed.replicas) {
    REQUIRE(r.size() == 3);
    std::set<std::string> racks;
    for (NodeId n : r) racks.insert(rack[n]);
    REQUIRE(racks.size() == 3);
  }
  // Two racks, factor 3: both racks used, no broker twice.
  std::vector<RackedBroker> two{{NodeId(1), "x"}, {NodeId(2), "x"}, {NodeId(3), "y"}};
  auto p2 = place_replicas(two, 0, 3, 3);
  REQUIRE_FALSE(p2.error);
  for (const auto& r : p2.replicas) {
    REQUIRE(std::set<NodeId>(r.begin(), r.end()).size() == 3);
  }
  // The first replicas still spread over every broker in turn.
  std::set<NodeId> leaders;
  for (const auto& r : placed.replicas) leaders.insert(r.front());
  REQUIRE(leaders.size() == 6);
}

TEST_CASE("a broker without a rack makes the placement the seed rule") {
  std::vector<RackedBroker> brokers{{NodeId(1), "a"}, {NodeId(2), std::nullopt}, {NodeId(3), "a"}};
  auto placed = place_replicas(brokers, 0, 3, 2);
  REQUIRE_FALSE(placed.error);
  REQUIRE(placed.replicas == std::vector<std::vector<NodeId>>{{NodeId(1), NodeId(2)}, {NodeId(2), NodeId(3)},
                                                             {NodeId(3), NodeId(1)}});
}
