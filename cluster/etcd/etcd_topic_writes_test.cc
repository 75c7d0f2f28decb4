// Topic transactions against a real etcd started with its defaults (label
// `cluster`): however many partitions a topic has, creating, growing,
// changing and deleting it stays within etcd's --max-txn-ops (128).
#include <catch2/catch.hpp>

#include "cluster/etcd/etcd_metadata_store.h"
#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_loader.h"
#include "cluster/partition_change.h"
#include "cluster/replica_placement.h"
#include "cluster/testing/etcd_process.h"
#include "cluster/testing/node_ids.h"
#include "cluster/testing/run.h"
#include "cluster/topic_writes.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::EtcdProcess;
using runnel::cluster::testing::ids;
using runnel::cluster::testing::run;

namespace {

TopicImage placed(const std::string& name, int32_t first, int32_t partitions) {
  TopicImage t;
  t.name = name;
  t.id.bytes[0] = 7;
  for (auto& r : place_replicas(ids({1, 2, 3}), first, partitions, 3).replicas) t.partitions.push_back(new_partition(r));
  return t;
}

std::unique_ptr<etcd::EtcdMetadataStore> open_store(EtcdProcess& etcd, boost::asio::io_context& io) {
  auto eps = etcd::parse_endpoints(etcd.endpoint());
  REQUIRE(eps);
  return std::make_unique<etcd::EtcdMetadataStore>(io.get_executor(), *eps, keys::root("c"), std::chrono::seconds(5));
}

// A real etcd with its defaults, and a store on it for cluster "c".
struct Fixture {
  EtcdProcess etcd;
  boost::asio::io_context io;
  std::unique_ptr<etcd::EtcdMetadataStore> store = open_store(etcd, io);
};

}  // namespace

TEST_CASE("etcd: a topic of 1000 partitions is created, grown, changed and deleted", "[etcd]") {
  Fixture f;
  auto& io = f.io;
  auto& store = *f.store;
  MetadataLoader loader("c", NodeId(1), [](const std::string& w) { FAIL(w); });
  auto image = [&] { return loader.load(*run(io, store.range(""))); };

  auto created = run(io, store.commit(create_topic_txn(placed("big", 0, 1000))));
  REQUIRE(created);
  REQUIRE(created->succeeded);
  TopicImage t = *image()->topic("big");
  REQUIRE(t.partitions.size() == 1000);
  CHECK(t.partitions[999].replicas == ids({1, 2, 3}));
  CHECK(t.partitions[500].leader == NodeId(3));

  auto grown = run(io, store.commit(add_partitions_txn(t, placed("big", 1000, 300).partitions)));
  REQUIRE(grown);
  REQUIRE(grown->succeeded);
  t = *image()->topic("big");
  REQUIRE(t.partitions.size() == 1300);
  CHECK(t.partitions[1299].replicas == ids({1, 2, 3}));

  // Every partition re-elected, as the controller's batches do (a change
  // per partition, the topic compared once per transaction).
  const IsLive without_1 = [](NodeId n) { return n != NodeId(1); };
  size_t changed = 0;
  Txn txn;
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    auto next = reelect(t.partitions[i], without_1, false);
    if (!next) continue;
    add_partition_change(txn, t.name, t.create_revision, static_cast<int32_t>(i), t.partitions[i], *next);
    if (txn.ops.size() == 63 || i + 1 == t.partitions.size()) {
      CHECK(txn.compares.size() == txn.ops.size() + 1);
      auto r = run(io, store.commit(std::exchange(txn, Txn{})));
      REQUIRE(r);
      REQUIRE(r->succeeded);
    }
    ++changed;
  }
  CHECK(changed == 1300);
  t = *image()->topic("big");
  for (const auto& p : t.partitions) {
    CHECK(p.leader != NodeId(1));
    CHECK(p.mod_revision > 0);
  }

  auto deleted = run(io, store.commit(delete_topic_txn(t)));
  REQUIRE(deleted);
  REQUIRE(deleted->succeeded);
  CHECK(image()->topic("big") == nullptr);
  CHECK(run(io, store.range(keys::kPartitionsPrefix))->kvs.empty());
}

TEST_CASE("etcd: a create-revision compare holds for one incarnation of a key", "[etcd]") {
  Fixture f;
  auto& io = f.io;
  auto& store = *f.store;
  const Revision born = *run(io, store.put("topics/t", "1"));
  REQUIRE(run(io, store.put("topics/t", "2")));  // an update keeps the create revision
  Txn txn;
  txn.compares = {Compare::created_at("topics/t", born)};
  txn.ops = {Op::put("partitions/t/0", "x")};
  REQUIRE(run(io, store.commit(txn))->succeeded);
  REQUIRE(run(io, store.erase("topics/t")));
  REQUIRE(run(io, store.put("topics/t", "3")));  // created again
  CHECK_FALSE(run(io, store.commit(txn))->succeeded);
  Txn erase;
  erase.ops = {Op::erase_prefix("partitions/t/")};
  REQUIRE(run(io, store.put("partitions/t2/0", "other topic")));
  REQUIRE(run(io, store.commit(erase))->succeeded);
  CHECK_FALSE(*run(io, store.get("partitions/t/0")));
  CHECK(*run(io, store.get("partitions/t2/0")));
}
