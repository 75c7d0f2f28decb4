// Topic transactions through the single-node store, read back through the
// metadata loader as every broker reads them.
#include "cluster/topic_writes.h"

#include <catch2/catch.hpp>

#include "cluster/metadata_loader.h"
#include "cluster/partition_change.h"
#include "cluster/replica_placement.h"
#include "cluster/testing/node_ids.h"
#include "cluster/testing/local_store.h"
#include "cluster/testing/run.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::ids;
using runnel::cluster::testing::run;

namespace {

struct Fixture : runnel::cluster::testing::LocalStore {
  MetadataLoader loader{"c", NodeId(1), [](const std::string&) {}};
  ImagePtr image() { return loader.load(*run(io, store->range(""))); }
};

TopicImage placed(const std::string& name, uint8_t id, int32_t partitions, int16_t rf) {
  TopicImage t;
  t.name = name;
  t.id.bytes[0] = id;
  for (auto& r : place_replicas(ids({1, 2, 3}), 0, partitions, rf).replicas) t.partitions.push_back(new_partition(r));
  return t;
}

}  // namespace

TEST_CASE("a topic is created with its partitions at once, and only once") {
  Fixture f;
  REQUIRE(run(f.io, f.store->commit(create_topic_txn(placed("t", 1, 3, 3))))->succeeded);
  CHECK_FALSE(run(f.io, f.store->commit(create_topic_txn(placed("t", 2, 1, 1))))->succeeded);
  ImagePtr image = f.image();
  auto t = image->topic("t");
  REQUIRE(t);
  REQUIRE(t->partitions.size() == 3);
  CHECK(t->partitions[1].replicas == ids({2, 3, 1}));
  CHECK(t->partitions[1].leader == NodeId(2));
  // One key: the partitions are in the state the topic's assignment gives
  // them until each gets a key of its own.
  CHECK(t->partitions[1].mod_revision == kAbsent);
  CHECK(t->partitions[1] == new_partition(ids({2, 3, 1})));
  CHECK(run(f.io, f.store->range("partitions/"))->kvs.empty());
}

TEST_CASE("a partition's change is its own key, a stale writer loses to it, and to a topic created again") {
  Fixture f;
  REQUIRE(run(f.io, f.store->commit(create_topic_txn(placed("t", 1, 2, 3))))->succeeded);
  TopicImage first = *f.image()->topic("t");
  PartitionRegistration shrunk = first.partitions[0];
  shrunk.isr = ids({1, 2});
  ++shrunk.partition_epoch;
  REQUIRE(run(f.io, f.store->commit(partition_change_txn(first, PartitionId(0), shrunk)))->succeeded);
  TopicImage changed = *f.image()->topic("t");
  CHECK(changed.partitions[0].isr == ids({1, 2}));
  CHECK(changed.partitions[0].mod_revision > 0);
  CHECK(changed.partitions[1] == first.partitions[1]);
  // Built on the state before: the key's revision moved on.
  CHECK_FALSE(run(f.io, f.store->commit(partition_change_txn(first, PartitionId(0), shrunk)))->succeeded);

  // Deleted and created again: partition 1 is keyless in both incarnations,
  // but a change built on the first one's image does not apply to the second.
  REQUIRE(run(f.io, f.store->commit(delete_topic_txn(changed)))->succeeded);
  CHECK(run(f.io, f.store->range("partitions/"))->kvs.empty());
  REQUIRE(run(f.io, f.store->commit(create_topic_txn(placed("t", 2, 2, 3))))->succeeded);
  PartitionRegistration stale = first.partitions[1];
  stale.isr = ids({3});
  ++stale.partition_epoch;
  CHECK_FALSE(run(f.io, f.store->commit(partition_change_txn(first, PartitionId(1), stale)))->succeeded);
  TopicImage second = *f.image()->topic("t");
  CHECK(second.partitions[1] == new_partition(second.partitions[1].replicas));
  CHECK(run(f.io, f.store->commit(partition_change_txn(second, PartitionId(1), stale)))->succeeded);
}

TEST_CASE("growth and deletion are conditioned on the topic's revision") {
  Fixture f;
  REQUIRE(run(f.io, f.store->commit(create_topic_txn(placed("t", 1, 2, 2))))->succeeded);
  TopicImage seen = *f.image()->topic("t");
  std::vector<PartitionRegistration> more;
  for (auto& r : place_replicas(ids({1, 2, 3}), 2, 2, 2).replicas) more.push_back(new_partition(r));
  REQUIRE(run(f.io, f.store->commit(add_partitions_txn(seen, more)))->succeeded);
  CHECK(f.image()->topic("t")->partitions.size() == 4);
  CHECK(f.image()->topic("t")->partitions[3].replicas == ids({1, 2}));
  // `seen` is stale now: neither a second growth nor a deletion from it applies.
  CHECK_FALSE(run(f.io, f.store->commit(add_partitions_txn(seen, more)))->succeeded);
  CHECK_FALSE(run(f.io, f.store->commit(delete_topic_txn(seen)))->succeeded);
  TopicImage now = *f.image()->topic("t");
  REQUIRE(run(f.io, f.store->commit(set_topic_configs_txn(now, {{"retention.ms", "5"}})))->succeeded);
  now = *f.image()->topic("t");
  CHECK(now.configs.at("retention.ms") == "5");
  REQUIRE(run(f.io, f.store->commit(delete_topic_txn(now)))->succeeded);
  ImagePtr image = f.image();
  CHECK(image->topic("t") == nullptr);
  CHECK(run(f.io, f.store->range("partitions/"))->kvs.empty());
}
