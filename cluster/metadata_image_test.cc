#include <catch2/catch.hpp>

#include "cluster/metadata_cache.h"

using namespace runnel;
using namespace runnel::cluster;

namespace {

Uuid uuid(uint8_t n) {
  Uuid u;
  u.bytes[15] = n;
  return u;
}

PartitionRegistration led_by(int32_t leader, std::vector<int32_t> replicas, int32_t epoch = 0) {
  PartitionRegistration r;
  for (auto n : replicas) r.replicas.push_back(NodeId(n));
  r.isr = r.replicas;
  r.leader = NodeId(leader);
  r.leader_epoch = LeaderEpoch(epoch);
  return r;
}

TopicImage topic(const std::string& name, uint8_t id, std::vector<PartitionRegistration> partitions) {
  TopicImage t;
  t.name = name;
  t.id = uuid(id);
  t.partitions = std::move(partitions);
  return t;
}

ImagePtr make(MetadataImage image) { return std::make_shared<const MetadataImage>(std::move(image)); }

}  // namespace

TEST_CASE("an image finds topics by name and id, and a copy shares the topics it did not touch") {
  MetadataImage a = MetadataImage("c").with_topic(topic("t", 1, {led_by(1, {1, 2})})).with_topic(topic("u", 2, {}));
  REQUIRE(a.topic("t")->id == uuid(1));
  REQUIRE(a.topic(uuid(2))->name == "u");
  REQUIRE(a.partition("t", PartitionId(0))->leader == NodeId(1));
  REQUIRE(a.partition("t", PartitionId(1)) == nullptr);
  MetadataImage b = a.with_partition("t", PartitionId(0), led_by(2, {1, 2}, 1));
  CHECK(b.topic("u") == a.topic("u"));
  CHECK(b.topic("t") != a.topic("t"));
  CHECK(a.partition("t", PartitionId(0))->leader == NodeId(1));
  CHECK(b.topic(uuid(1))->partitions[0].leader == NodeId(2));
  CHECK_THROWS(b.with_partition("t", PartitionId(3), led_by(1, {1})));
  CHECK_THROWS(b.with_topic(topic("v", 1, {})));  // one id, two names
}

TEST_CASE("with_topics adds and replaces many topics in one copy, as with_topic would one by one") {
  MetadataImage a = MetadataImage("c").with_topic(topic("t", 1, {led_by(1, {1})})).with_topic(topic("u", 2, {}));
  MetadataImage b = a.with_topics({topic("t", 1, {led_by(1, {1}), led_by(1, {1})}), topic("w", 3, {})});
  CHECK(b.topic("u") == a.topic("u"));
  REQUIRE(b.topic("t"));
  CHECK(b.topic("t")->partitions.size() == 2);
  CHECK(b.topic(uuid(1)) == b.topic("t"));
  CHECK(b.topic(uuid(3))->name == "w");
  CHECK(a.topic("t")->partitions.size() == 1);  // the original is untouched
  CHECK_FALSE(a.topic("w"));
  CHECK_THROWS(a.with_topics({topic("v", 2, {})}));  // one id, two names
}

TEST_CASE("live brokers are the registered, unfenced ones") {
  BrokerRegistration b1{NodeId(1), 10, {}, std::nullopt, false};
  BrokerRegistration b2{NodeId(2), 11, {}, std::nullopt, true};
  MetadataImage m = MetadataImage().with_broker(b1).with_broker(b2);
  CHECK(m.live_brokers() == std::vector<NodeId>{NodeId(1)});
  CHECK(m.without_broker(NodeId(1)).live_brokers().empty());
}

TEST_CASE("a delta names created, deleted and changed topics and partitions") {
  auto before = make(MetadataImage().with_topic(topic("t", 1, {led_by(1, {1, 2}), led_by(2, {2, 1})})).with_topic(
      topic("gone", 2, {led_by(1, {1})})));
  auto after = make(before->with_partition("t", PartitionId(1), led_by(1, {2, 1}, 1))
                        .with_partition("t", PartitionId(2), led_by(2, {2, 1}))
                        .without_topic("gone")
                        .with_topic(topic("new", 3, {led_by(2, {2})})));
  MetadataDelta d(before, after);
  REQUIRE(d.topics().size() == 3);
  const TopicDelta& t = d.topics().at(uuid(1));
  CHECK_FALSE(t.created());
  CHECK(t.changed_partitions.size() == 2);
  CHECK(t.changed_partitions.count(PartitionId(0)) == 0);
  CHECK(d.topics().at(uuid(2)).deleted());
  CHECK(d.topics().at(uuid(3)).created());
  CHECK(MetadataDelta(after, after).empty());
}

TEST_CASE("a topic deleted and created again under its name is a deletion and a creation") {
  auto before = make(MetadataImage().with_topic(topic("t", 1, {led_by(1, {1})})));
  auto after = make(before->with_topic(topic("t", 9, {led_by(1, {1})})));
  MetadataDelta d(before, after);
  CHECK(d.topics().at(uuid(1)).deleted());
  CHECK(d.topics().at(uuid(9)).created());
  LocalChanges local = d.local_changes(NodeId(1));
  CHECK(local.deletes.size() == 1);
  CHECK(local.leaders.size() == 1);
  CHECK(local.leaders[0].topic_id == uuid(9));
}

TEST_CASE("local changes: what this broker now leads, follows, or stops hosting") {
  auto before = make(MetadataImage().with_topic(topic("t", 1, {led_by(1, {1, 2}), led_by(2, {2, 1}), led_by(1, {1, 3})})));
  auto after = make(before->with_partition("t", PartitionId(0), led_by(2, {1, 2}, 1))   // 1 loses leadership
                        .with_partition("t", PartitionId(1), led_by(1, {2, 1}, 1))     // 1 gains it
                        .with_partition("t", PartitionId(2), led_by(3, {3, 4}, 1)));   // moved off 1
  LocalChanges one = MetadataDelta(before, after).local_changes(NodeId(1));
  REQUIRE(one.followers.size() == 1);
  CHECK(one.followers[0].partition == PartitionId(0));
  REQUIRE(one.leaders.size() == 1);
  CHECK(one.leaders[0].partition == PartitionId(1));
  CHECK(one.leaders[0].registration.leader_epoch == LeaderEpoch(1));
  REQUIRE(one.deletes.size() == 1);
  CHECK(one.deletes[0].partition == PartitionId(2));
  LocalChanges four = MetadataDelta(before, after).local_changes(NodeId(4));
  CHECK(four.followers.size() == 1);
  CHECK(four.deletes.empty());
}

TEST_CASE("the cache installs newer images and tells subscribers what changed") {
  MetadataCache cache(make(MetadataImage().with_revision(5)));
  std::vector<size_t> seen;
  cache.subscribe([&](const MetadataDelta& d) {
    CHECK(cache.image() == d.after());
    seen.push_back(d.topics().size());
  });
  auto next = make(cache->with_topic(topic("t", 1, {led_by(1, {1})})).with_revision(6));
  CHECK(cache.publish(next));
  CHECK(cache->topic("t") != nullptr);
  CHECK_FALSE(cache.publish(make(MetadataImage().with_revision(4))));  // late: ignored
  CHECK(cache->topic("t") != nullptr);
  CHECK(cache.publish(make(next->with_revision(7))));  // nothing changed: no call
  CHECK(seen == std::vector<size_t>{1});
}
