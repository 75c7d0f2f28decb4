#include "cluster/partition_reassignment.h"

#include <catch2/catch.hpp>
#include <set>

#include "cluster/metadata_codec.h"
#include "cluster/testing/node_ids.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::ids;
using runnel::protocol::ErrorCode;

namespace {

IsLive in_set(std::set<int32_t> s) {
  return [s](NodeId n) { return s.count(n.value()) > 0; };
}

const IsLive kBrokers = in_set({1, 2, 3, 4});

PartitionRegistration reg(std::vector<int32_t> replicas, std::vector<int32_t> isr, int32_t leader) {
  PartitionRegistration p;
  p.replicas = ids(replicas);
  p.isr = ids(isr);
  p.leader = NodeId(leader);
  p.leader_epoch = LeaderEpoch(5);
  p.partition_epoch = 10;
  return p;
}

PartitionRegistration moved(const PartitionRegistration& current, std::vector<int32_t> target, bool allow_rf = true) {
  auto r = reassign(current, ids(target), allow_rf, kBrokers, kBrokers);
  REQUIRE(std::holds_alternative<PartitionRegistration>(r));
  return std::get<PartitionRegistration>(r);
}

ReassignmentError refused(const Reassigned& r) {
  REQUIRE(std::holds_alternative<ReassignmentError>(r));
  return std::get<ReassignmentError>(r);
}

}  // namespace

TEST_CASE("a move lists the target, then the replicas being removed, the leader and ISR stay") {
  auto next = moved(reg({1, 2}, {1, 2}, 1), {2, 3});
  CHECK(next.replicas == ids({2, 3, 1}));
  CHECK(next.adding_replicas == ids({3}));
  CHECK(next.removing_replicas == ids({1}));
  CHECK(next.isr == ids({1, 2}));
  CHECK(next.leader == NodeId(1));
  CHECK(next.leader_epoch == LeaderEpoch(5));
  CHECK(next.partition_epoch == 11);
  CHECK(next.reassigning());
  CHECK(original_replicas(next) == ids({2, 1}));
  CHECK(target_replicas(next) == ids({2, 3}));
}

TEST_CASE("the removed replicas follow the target in ascending id order, as Kafka's TreeSet has them") {
  auto next = moved(reg({3, 1, 2}, {3, 1, 2}, 3), {4});
  CHECK(next.replicas == ids({4, 1, 2, 3}));
  CHECK(next.removing_replicas == ids({1, 2, 3}));
}

TEST_CASE("the last target replica joining the ISR completes the move and hands leadership to the target") {
  auto moving = moved(reg({1, 2}, {1, 2}, 1), {2, 3});
  auto r = alter_isr(moving, NodeId(1), LeaderEpoch(5), ids({1, 2, 3}), kBrokers);
  REQUIRE(std::holds_alternative<PartitionRegistration>(r));
  const auto& done = std::get<PartitionRegistration>(r);
  CHECK(done.replicas == ids({2, 3}));
  CHECK(done.isr == ids({2, 3}));
  CHECK_FALSE(done.reassigning());
  CHECK(done.leader == NodeId(2));
  CHECK(done.leader_epoch == LeaderEpoch(6));
  CHECK(done.partition_epoch == moving.partition_epoch + 1);
}

TEST_CASE("a leader that stays in the target keeps leading, at the next epoch: a replica was dropped") {
  auto moving = moved(reg({1, 2}, {1, 2}, 1), {1, 3});
  auto done = std::get<PartitionRegistration>(alter_isr(moving, NodeId(1), LeaderEpoch(5), ids({1, 2, 3}), kBrokers));
  CHECK(done.replicas == ids({1, 3}));
  CHECK(done.isr == ids({1, 3}));
  CHECK(done.leader == NodeId(1));
  CHECK(done.leader_epoch == LeaderEpoch(6));
}

TEST_CASE("growing the replication factor drops no replica: the leader epoch stays") {
  auto moving = moved(reg({1, 2}, {1, 2}, 1), {1, 2, 3});
  auto done = std::get<PartitionRegistration>(alter_isr(moving, NodeId(1), LeaderEpoch(5), ids({1, 2, 3}), kBrokers));
  CHECK_FALSE(done.reassigning());
  CHECK(done.replicas == ids({1, 2, 3}));
  CHECK(done.leader_epoch == LeaderEpoch(5));
}

TEST_CASE("an ISR expansion that leaves a target replica out of sync does not complete the move") {
  auto moving = moved(reg({1, 2}, {1}, 1), {2, 3});
  auto next = std::get<PartitionRegistration>(alter_isr(moving, NodeId(1), LeaderEpoch(5), ids({1, 3}), kBrokers));
  CHECK(next.reassigning());
  CHECK(next.replicas == ids({2, 3, 1}));
  CHECK(next.isr == ids({3, 1}));
}

TEST_CASE("a target already in sync completes at once: shrinking the replication factor") {
  auto next = moved(reg({1, 2, 3}, {1, 2, 3}, 3), {1, 2});
  CHECK_FALSE(next.reassigning());
  CHECK(next.replicas == ids({1, 2}));
  CHECK(next.isr == ids({1, 2}));
  CHECK(next.leader == NodeId(1));
  CHECK(next.leader_epoch == LeaderEpoch(6));
  CHECK(next.partition_epoch == 11);
}

TEST_CASE("the current replicas as target change nothing, a new order is written at once") {
  const auto current = reg({1, 2}, {1, 2}, 1);
  CHECK(moved(current, {1, 2}) == current);
  auto reordered = moved(current, {2, 1});
  CHECK(reordered.replicas == ids({2, 1}));
  CHECK_FALSE(reordered.reassigning());
  CHECK(reordered.leader == NodeId(1));
  CHECK(reordered.partition_epoch == 11);
}

TEST_CASE("cancelling restores the replicas before the move and drops the adding ones from the ISR") {
  auto moving = moved(reg({1, 2}, {1, 2}, 1), {2, 3});
  moving.isr = ids({1, 3});  // 3 joined, 2 fell behind
  auto r = cancel_reassignment(moving, kBrokers);
  REQUIRE(std::holds_alternative<PartitionRegistration>(r));
  const auto& back = std::get<PartitionRegistration>(r);
  CHECK(back.replicas == ids({2, 1}));
  CHECK(back.isr == ids({1}));
  CHECK_FALSE(back.reassigning());
  CHECK(back.leader == NodeId(1));
  CHECK(back.leader_epoch == LeaderEpoch(6));  // replica 3 dropped
  CHECK(back.partition_epoch == moving.partition_epoch + 1);
}

TEST_CASE("cancelling hands leadership back when an adding replica led") {
  auto moving = moved(reg({1, 2}, {1, 2}, 1), {3, 2});
  moving.isr = ids({3, 2});
  moving.leader = NodeId(3);
  auto back = std::get<PartitionRegistration>(cancel_reassignment(moving, kBrokers));
  CHECK(back.isr == ids({2}));
  CHECK(back.leader == NodeId(2));
  CHECK(back.leader_epoch == LeaderEpoch(6));
}

TEST_CASE("cancelling with nothing moving is NO_REASSIGNMENT_IN_PROGRESS") {
  CHECK(refused(cancel_reassignment(reg({1, 2}, {1, 2}, 1), kBrokers)).error == ErrorCode::no_reassignment_in_progress);
}

TEST_CASE("a cancel that would need an unclean election is refused") {
  auto moving = moved(reg({1}, {1}, 1), {2});
  moving.isr = ids({2});
  moving.leader = NodeId(2);
  CHECK(refused(cancel_reassignment(moving, kBrokers)).error == ErrorCode::invalid_replica_assignment);
}

TEST_CASE("empty, duplicate and unknown brokers are INVALID_REPLICA_ASSIGNMENT") {
  const auto current = reg({1, 2}, {1, 2}, 1);
  auto empty = refused(reassign(current, {}, true, kBrokers, kBrokers));
  CHECK(empty.error == ErrorCode::invalid_replica_assignment);
  CHECK(empty.message.find("empty") != std::string::npos);
  auto twice = refused(reassign(current, ids({2, 2}), true, kBrokers, kBrokers));
  CHECK(twice.error == ErrorCode::invalid_replica_assignment);
  CHECK(twice.message.find("more than once") != std::string::npos);
  auto unknown = refused(reassign(current, ids({2, 9}), true, kBrokers, kBrokers));
  CHECK(unknown.error == ErrorCode::invalid_replica_assignment);
  CHECK(unknown.message.find("broker 9") != std::string::npos);
}

TEST_CASE("without AllowReplicationFactorChange a different length is INVALID_REPLICATION_FACTOR") {
  const auto current = reg({1, 2}, {1, 2}, 1);
  CHECK(refused(reassign(current, ids({1, 2, 3}), false, kBrokers, kBrokers)).error ==
        ErrorCode::invalid_replication_factor);
  CHECK(moved(current, {2, 3}, false).reassigning());
  // Over a move in progress, the factor is the target's.
  auto moving = moved(current, {2, 3});
  CHECK(moved(moving, {3, 4}, false).reassigning());
}

TEST_CASE("a new target over a running move removes the adding replicas it drops") {
  auto moving = moved(reg({1, 2}, {1, 2}, 1), {2, 3});
  auto next = moved(moving, {2, 4});
  CHECK(next.replicas == ids({2, 4, 1, 3}));
  CHECK(next.adding_replicas == ids({4}));
  CHECK(next.removing_replicas == ids({1, 3}));
}

TEST_CASE("the codec keeps adding and removing replicas, and reads values written without them") {
  auto moving = moved(reg({1, 2}, {1, 2}, 1), {2, 3});
  auto back = decode_partition(encode_partition(moving));
  REQUIRE(std::holds_alternative<PartitionRegistration>(back));
  CHECK(std::get<PartitionRegistration>(back) == moving);
  auto old = decode_partition(R"({"replicas":[1,2],"isr":[1,2],"leader":1,"leader_epoch":5,"partition_epoch":10})");
  REQUIRE(std::holds_alternative<PartitionRegistration>(old));
  CHECK(std::get<PartitionRegistration>(old) == reg({1, 2}, {1, 2}, 1));
  CHECK(encode_partition(reg({1, 2}, {1, 2}, 1)).find("adding") == std::string::npos);
}
