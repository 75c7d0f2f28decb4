#include "cluster/partition_change.h"

#include <catch2/catch.hpp>
#include <set>

#include "cluster/testing/node_ids.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::ids;

namespace {


IsLive live_set(std::set<int32_t> live) {
  return [live](NodeId n) { return live.count(n.value()) > 0; };
}

PartitionRegistration reg(std::vector<int32_t> replicas, std::vector<int32_t> isr, int32_t leader, int32_t epoch = 3) {
  PartitionRegistration p;
  p.replicas = ids(replicas);
  p.isr = ids(isr);
  p.leader = NodeId(leader);
  p.leader_epoch = LeaderEpoch(epoch);
  p.partition_epoch = 10;
  return p;
}

}  // namespace

TEST_CASE("nothing changes while every replica is live") {
  CHECK_FALSE(reelect(reg({1, 2, 3}, {1, 2, 3}, 1), live_set({1, 2, 3}), false));
}

TEST_CASE("a dead follower leaves the ISR, the leader stays and its epoch with it") {
  auto next = reelect(reg({1, 2, 3}, {1, 2, 3}, 1), live_set({1, 2}), false);
  REQUIRE(next);
  CHECK(next->isr == ids({1, 2}));
  CHECK(next->leader == NodeId(1));
  CHECK(next->leader_epoch == LeaderEpoch(3));
  CHECK(next->partition_epoch == 11);
}

TEST_CASE("a dead leader is replaced by the first live ISR member in replica order, at the next epoch") {
  auto next = reelect(reg({1, 2, 3}, {3, 2, 1}, 1), live_set({2, 3}), false);
  REQUIRE(next);
  CHECK(next->leader == NodeId(2));
  CHECK(next->leader_epoch == LeaderEpoch(4));
  CHECK(next->isr == ids({3, 2}));
}

TEST_CASE("an out-of-sync replica never leads unless unclean election is enabled") {
  auto clean = reelect(reg({1, 2}, {1}, 1), live_set({2}), false);
  REQUIRE(clean);
  CHECK(clean->leader == kNoNode);
  CHECK(clean->isr == ids({1}));  // the last member stays
  CHECK(clean->leader_epoch == LeaderEpoch(4));
  auto unclean = reelect(reg({1, 2}, {1}, 1), live_set({2}), true);
  REQUIRE(unclean);
  CHECK(unclean->leader == NodeId(2));
  CHECK(unclean->isr == ids({2}));
}

TEST_CASE("the last ISR member leads again when it returns") {
  auto offline = *reelect(reg({1, 2}, {1}, 1), live_set({2}), false);
  auto back = reelect(offline, live_set({1, 2}), false);
  REQUIRE(back);
  CHECK(back->leader == NodeId(1));
  CHECK(back->leader_epoch == LeaderEpoch(5));
  CHECK_FALSE(reelect(*back, live_set({1, 2}), false));
}

TEST_CASE("preferred leader election moves leadership back to the first replica") {
  auto p = reg({1, 2, 3}, {1, 2, 3}, 2);
  auto next = elect_preferred(p, live_set({1, 2, 3}));
  REQUIRE(next);
  CHECK(next->leader == NodeId(1));
  CHECK(next->leader_epoch == LeaderEpoch(4));
  CHECK_FALSE(elect_preferred(*next, live_set({1, 2, 3})));
  CHECK_FALSE(elect_preferred(reg({1, 2}, {2}, 2), live_set({1, 2})));  // not in sync
}

TEST_CASE("a leader's ISR change is checked as Kafka's AlterPartition") {
  auto p = reg({1, 2, 3}, {1, 2}, 1);
  auto live = live_set({1, 2, 3});
  auto grown = alter_isr(p, NodeId(1), LeaderEpoch(3), ids({3, 1, 2}), live);
  REQUIRE(std::holds_alternative<PartitionRegistration>(grown));
  CHECK(std::get<PartitionRegistration>(grown).isr == ids({1, 2, 3}));
  CHECK(std::get<PartitionRegistration>(grown).partition_epoch == 11);
  CHECK(std::get<IsrChangeError>(alter_isr(p, NodeId(1), LeaderEpoch(2), ids({1}), live)).error == "FENCED_LEADER_EPOCH");
  CHECK(std::get<IsrChangeError>(alter_isr(p, NodeId(2), LeaderEpoch(3), ids({2}), live)).error == "NOT_LEADER_OR_FOLLOWER");
  CHECK(std::get<IsrChangeError>(alter_isr(p, NodeId(1), LeaderEpoch(3), ids({2}), live)).error == "INVALID_REQUEST");
  CHECK(std::get<IsrChangeError>(alter_isr(p, NodeId(1), LeaderEpoch(3), ids({1, 4}), live)).error == "INVALID_REQUEST");
  CHECK(std::get<IsrChangeError>(alter_isr(p, NodeId(1), LeaderEpoch(3), ids({1, 2, 3}), live_set({1, 2})))
            .error == "INELIGIBLE_REPLICA");
}

TEST_CASE("a new partition: all replicas in sync, the first leads at epoch 0") {
  auto p = new_partition(ids({2, 3, 1}));
  CHECK(p.leader == NodeId(2));
  CHECK(p.isr == ids({2, 3, 1}));
  CHECK(p.leader_epoch == LeaderEpoch(0));
  CHECK(p.partition_epoch == 0);
}
