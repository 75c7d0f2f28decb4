// Broker registration and controller election over the single-node store
// (leases in memory); the etcd tests run the same against a real etcd.
#include "cluster/broker_registry.h"

#include <catch2/catch.hpp>

#include "cluster/controller.h"
#include "cluster/controller_election.h"
#include "cluster/metadata_codec.h"
#include "cluster/etcd/key_layout.h"
#include "cluster/testing/local_store.h"
#include "cluster/testing/run.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::run;
using runnel::cluster::testing::run_until;
using namespace std::chrono_literals;

namespace {

struct Fixture : runnel::cluster::testing::LocalStore {
  RegistryOptions options{1000ms, 200ms};
  BrokerRegistration broker(int32_t id) {
    return {NodeId(id), 0, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.1", static_cast<uint16_t>(9000 + id)}}, std::nullopt,
            false};
  }
  bool registered(int32_t id) { return run(io, store->get(keys::broker(NodeId(id))))->has_value(); }
};

}  // namespace

TEST_CASE("a broker registers under a lease, a second registration of its id waits for the first to end") {
  Fixture f;
  BrokerRegistry first(*f.store, f.broker(1), f.options);
  REQUIRE_FALSE(run(f.io, first.start(1s, {}, {})));
  CHECK(f.registered(1));
  CHECK(first.epoch() > 0);

  BrokerRegistry twin(*f.store, f.broker(1), f.options);
  CHECK(run(f.io, twin.start(500ms, {}, {})) == std::errc::address_in_use);

  REQUIRE_FALSE(run(f.io, first.stop()));
  CHECK_FALSE(f.registered(1));
  BrokerRegistry again(*f.store, f.broker(1), f.options);
  REQUIRE_FALSE(run(f.io, again.start(1s, {}, {})));
  CHECK(again.epoch() > first.epoch());  // a new incarnation
}

TEST_CASE("heartbeats keep the registration past its lease's ttl") {
  Fixture f;
  BrokerRegistry r(*f.store, f.broker(2), f.options);
  REQUIRE_FALSE(run(f.io, r.start(1s, {}, {})));
  const auto until = std::chrono::steady_clock::now() + 2500ms;
  run_until(f.io, [&] { return std::chrono::steady_clock::now() > until; }, 5s);
  CHECK(f.registered(2));
}

TEST_CASE("a lost session calls on_lost, then registers anew with a new epoch") {
  Fixture f;
  int lost = 0;
  std::vector<int64_t> epochs;
  BrokerRegistry r(*f.store, f.broker(3), f.options);
  REQUIRE_FALSE(run(f.io, r.start(1s, [&] { ++lost; }, [&](int64_t e) { epochs.push_back(e); })));
  REQUIRE(epochs.size() == 1);
  // The store ends the session (as etcd does when renewals stop arriving).
  REQUIRE_FALSE(run(f.io, f.store->revoke_lease(r.lease())));
  CHECK_FALSE(f.registered(3));
  REQUIRE(run_until(f.io, [&] { return epochs.size() == 2; }, 10s));
  CHECK(lost == 1);
  CHECK(epochs[1] > epochs[0]);
  CHECK(f.registered(3));
}

TEST_CASE("one controller at a time, when its session ends another broker takes over, and the old fence fails") {
  Fixture f;
  BrokerRegistry r1(*f.store, f.broker(1), f.options), r2(*f.store, f.broker(2), f.options);
  REQUIRE_FALSE(run(f.io, r1.start(1s, {}, {})));
  REQUIRE_FALSE(run(f.io, r2.start(1s, {}, {})));
  int elected1 = 0, elected2 = 0, resigned1 = 0;
  ControllerElection e1(*f.store, NodeId(1), [&](Revision) { ++elected1; }, [&] { ++resigned1; });
  e1.start(r1.lease());
  REQUIRE(run_until(f.io, [&] { return e1.is_controller(); }, 5s));
  ControllerElection e2(*f.store, NodeId(2), [&](Revision) { ++elected2; }, [] {});
  e2.start(r2.lease());
  run_until(f.io, [] { return false; }, 300ms);
  CHECK_FALSE(e2.is_controller());
  const Compare old_fence = e1.fence();

  REQUIRE_FALSE(run(f.io, r1.stop()));  // the controller's lease goes, and its key with it
  REQUIRE(run_until(f.io, [&] { return e2.is_controller() && resigned1 == 1; }, 5s));
  CHECK(elected1 == 1);
  CHECK(elected2 == 1);
  CHECK(e2.election_revision() > old_fence.mod_revision);

  Txn late;
  late.compares.push_back(old_fence);
  late.ops.push_back(Op::put("partitions/t/0", "{}"));
  CHECK_FALSE(run(f.io, f.store->commit(late))->succeeded);
  Txn current;
  current.compares.push_back(e2.fence());
  current.ops.push_back(Op::put("partitions/t/0", "{}"));
  CHECK(run(f.io, f.store->commit(current))->succeeded);
}

TEST_CASE("the controller re-elects the partitions of a broker whose session ended") {
  Fixture f;
  BrokerRegistry r1(*f.store, f.broker(1), f.options), r2(*f.store, f.broker(2), f.options);
  REQUIRE_FALSE(run(f.io, r1.start(1s, {}, {})));
  REQUIRE_FALSE(run(f.io, r2.start(1s, {}, {})));
  ControllerElection e2(*f.store, NodeId(2), {}, {});
  e2.start(r2.lease());
  REQUIRE(run_until(f.io, [&] { return e2.is_controller(); }, 5s));
  std::vector<std::string> log;
  Controller controller(*f.store, e2, {}, [&](const std::string& l) { log.push_back(l); });

  // Partition 0 led by broker 1, partition 1 by broker 2, both on both.
  PartitionRegistration p0;
  p0.replicas = p0.isr = {NodeId(1), NodeId(2)};
  p0.leader = NodeId(1);
  PartitionRegistration p1 = p0;
  p1.replicas = p1.isr = {NodeId(2), NodeId(1)};
  p1.leader = NodeId(2);
  TopicImage t;
  t.name = "t";
  t.id.bytes[0] = 7;
  t.partitions = {p0, p1};
  // Broker 1 is gone from the image: its partitions must move.
  auto image = std::make_shared<const MetadataImage>(MetadataImage("c").with_broker(f.broker(2)).with_topic(t));
  controller.on_image(image);
  REQUIRE(run_until(f.io, [&] { return controller.elections_written() == 2; }, 5s));
  auto moved = run(f.io, f.store->get(keys::partition("t", 0)));
  REQUIRE(moved->has_value());
  auto reg = std::get<PartitionRegistration>(decode_partition((*moved)->value));
  CHECK(reg.leader == NodeId(2));
  CHECK(reg.leader_epoch == LeaderEpoch(1));
  CHECK(reg.isr == std::vector<NodeId>{NodeId(2)});
  auto kept = std::get<PartitionRegistration>(decode_partition((*run(f.io, f.store->get(keys::partition("t", 1))))->value));
  CHECK(kept.leader == NodeId(2));
  CHECK(kept.leader_epoch == LeaderEpoch(0));  // only its ISR shrank
  CHECK(log.size() == 1);

  // Stale image (the revisions compared are the old ones): nothing written.
  controller.on_image(image);
  run_until(f.io, [] { return false; }, 200ms);
  CHECK(controller.elections_written() == 2);
}
