#include "cluster/replica_placement.h"

#include <catch2/catch.hpp>
#include <map>

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
