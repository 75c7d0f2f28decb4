#include "cluster/metadata_loader.h"

#include <catch2/catch.hpp>

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"
#include "cluster/metadata_delta.h"

using namespace runnel;
using namespace runnel::cluster;

namespace {

Uuid uuid(uint8_t n) {
  Uuid u;
  u.bytes[0] = 1;
  u.bytes[15] = n;
  return u;
}

KeyValue kv(std::string key, std::string value, Revision rev) {
  KeyValue k;
  k.key = std::move(key);
  k.value = std::move(value);
  k.create_revision = rev;
  k.mod_revision = rev;
  return k;
}

// A topic's key as a single node writes it: no assignment.
TopicRecord topic(const std::string& name, uint8_t id, int partitions) {
  return TopicRecord{name, uuid(id), partitions, {{"retention.ms", "1000"}}, {}};
}

PartitionRegistration replicated(std::vector<int32_t> replicas, int32_t leader, int32_t epoch) {
  PartitionRegistration p;
  for (auto r : replicas) p.replicas.push_back(NodeId(r));
  p.isr = p.replicas;
  p.leader = NodeId(leader);
  p.leader_epoch = LeaderEpoch(epoch);
  p.partition_epoch = epoch;
  return p;
}

// A cluster's topic key: each partition's replicas, its state at creation.
TopicRecord assigned(const std::string& name, uint8_t id, std::vector<std::vector<int32_t>> replicas) {
  TopicRecord t = topic(name, id, static_cast<int>(replicas.size()));
  for (const auto& r : replicas) {
    t.assignment.emplace_back();
    for (auto n : r) t.assignment.back().push_back(NodeId(n));
  }
  return t;
}

WatchEvent put(KeyValue k) { return {WatchEvent::Kind::put, std::move(k)}; }
WatchEvent erase(std::string key, Revision rev) { return {WatchEvent::Kind::erase, kv(std::move(key), "", rev)}; }

struct Fixture {
  std::vector<std::string> warnings;
  MetadataLoader loader{"cluster-1", NodeId(1), [this](const std::string& w) { warnings.push_back(w); }};
};

}  // namespace

TEST_CASE("the codec round-trips every value of the image") {
  auto p = replicated({1, 2, 3}, 2, 7);
  CHECK(std::get<PartitionRegistration>(decode_partition(encode_partition(p))) == p);
  BrokerRegistration b{NodeId(3), 0, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092}}, std::string("r1"), true};
  CHECK(std::get<BrokerRegistration>(decode_broker(encode_broker(b))) == b);
  CHECK(std::get<NodeId>(decode_controller(encode_controller(NodeId(2)))) == NodeId(2));
  auto t = std::get<TopicRecord>(decode_topic(encode_topic(topic("t", 1, 3))));
  CHECK(t.name == "t");
  CHECK(t.id == uuid(1));
  CHECK(t.partitions == 3);
  CHECK(t.configs.at("retention.ms") == "1000");
  CHECK(t.assignment.empty());
  TopicRecord assigned = topic("t", 1, 2);
  assigned.assignment = {{NodeId(1), NodeId(2)}, {NodeId(2), NodeId(3)}};
  CHECK(std::get<TopicRecord>(decode_topic(encode_topic(assigned))).assignment == assigned.assignment);
}

TEST_CASE("malformed values are errors, not exceptions") {
  CHECK(std::holds_alternative<std::string>(decode_topic("{")));
  CHECK(std::holds_alternative<std::string>(decode_topic(R"({"name":"t","id":"nope","partitions":1})")));
  CHECK(std::holds_alternative<std::string>(decode_partition(R"({"replicas":[],"isr":[],"leader":1,"leader_epoch":0,"partition_epoch":0})")));
  CHECK(std::holds_alternative<std::string>(decode_partition(R"({"replicas":[2],"isr":[2],"leader":1,"leader_epoch":0,"partition_epoch":0})")));
  CHECK(std::holds_alternative<std::string>(decode_broker(R"({"id":1,"epoch":1,"endpoints":[{"listener":"P","security_protocol":"P","host":"h","port":70000}]})")));
  CHECK(std::holds_alternative<std::string>(decode_controller("[]")));
  // An assignment must name replicas for every partition, and only those.
  CHECK(std::holds_alternative<std::string>(
      decode_topic(R"({"name":"t","id":"AQAAAAAAAAAAAAAAAAAAAQ","partitions":2,"configs":{},"assignment":[[1]]})")));
  CHECK(std::holds_alternative<std::string>(
      decode_topic(R"({"name":"t","id":"AQAAAAAAAAAAAAAAAAAAAQ","partitions":1,"configs":{},"assignment":[[]]})")));
}

TEST_CASE("a single node's topics, with no partition keys, are led by this broker at epoch 0") {
  Fixture f;
  RangeResult all;
  all.revision = 4;
  all.kvs = {kv(keys::topic("orders"), encode_topic(topic("orders", 1, 2)), 3),
             kv(keys::kProducerIds, "1000", 4)};
  ImagePtr image = f.loader.load(all);
  CHECK(image->revision() == 4);
  auto t = image->topic("orders");
  REQUIRE(t);
  REQUIRE(t->partitions.size() == 2);
  CHECK(t->partitions[1].leader == NodeId(1));
  CHECK(t->partitions[1].replicas == std::vector<NodeId>{NodeId(1)});
  CHECK(t->partitions[1].leader_epoch == LeaderEpoch(0));
  CHECK(t->configs.at("retention.ms") == "1000");
  CHECK(f.warnings.empty());
}

TEST_CASE("a cluster's image: brokers, controller, and partitions from their own keys") {
  Fixture f;
  RangeResult all;
  all.revision = 10;
  BrokerRegistration b2{NodeId(2), 5, {{"PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9093}}, std::nullopt, false};
  all.kvs = {kv(keys::broker(NodeId(2)), encode_broker(b2), 5),
             kv(keys::kController, encode_controller(NodeId(2)), 6),
             kv(keys::topic("t"), encode_topic(assigned("t", 1, {{1, 2}, {2, 1}, {3, 1}})), 7),
             kv(keys::partition("t", 0), encode_partition(replicated({1, 2}, 1, 3)), 8),
             kv(keys::partition("t", 1), encode_partition(replicated({2, 1}, 2, 4)), 9)};
  ImagePtr image = f.loader.load(all);
  CHECK(image->controller() == NodeId(2));
  REQUIRE(image->broker(NodeId(2)));
  CHECK(image->broker(NodeId(2))->endpoints[0].port == 9093);
  CHECK(image->broker(NodeId(2))->epoch == 5);  // the registration's create revision
  CHECK(image->partition("t", PartitionId(0))->mod_revision == 8);
  CHECK(image->partition("t", PartitionId(1))->leader == NodeId(2));
  CHECK(image->partition("t", PartitionId(0))->leader_epoch == LeaderEpoch(3));
  // Partition 2 has no key yet: still as created, led by its first replica.
  CHECK(*image->partition("t", PartitionId(2)) == replicated({3, 1}, 3, 0));
  CHECK(image->partition("t", PartitionId(2))->mod_revision == kAbsent);

  SECTION("a watch batch changes only what it touches, and the delta says so") {
    BrokerRegistration b3{NodeId(3), 11, {}, std::nullopt, false};
    ImagePtr next = f.loader.apply({put(kv(keys::partition("t", 0), encode_partition(replicated({1, 2}, 2, 4)), 11)),
                                    put(kv(keys::broker(NodeId(3)), encode_broker(b3), 12))});
    CHECK(next->revision() == 12);
    MetadataDelta d(image, next);
    REQUIRE(d.topics().size() == 1);
    CHECK(d.topics().begin()->second.changed_partitions.size() == 1);
    CHECK(d.changed_brokers() == std::set<NodeId>{NodeId(3)});
    LocalChanges local = d.local_changes(NodeId(1));
    REQUIRE(local.followers.size() == 1);
    CHECK(local.followers[0].registration.leader == NodeId(2));
  }
  SECTION("a deleted topic and a lost controller leave the image") {
    ImagePtr next = f.loader.apply({erase(keys::topic("t"), 11), erase(keys::partition("t", 0), 11),
                                    erase(keys::partition("t", 1), 11), erase(keys::kController, 12)});
    CHECK(next->topic("t") == nullptr);
    CHECK_FALSE(next->controller());
    CHECK(MetadataDelta(image, next).local_changes(NodeId(1)).deletes.size() == 3);
  }
  SECTION("a bad value is reported and left out; the rest still loads") {
    ImagePtr next = f.loader.apply({put(kv(keys::topic("bad"), "not json", 11)),
                                    put(kv(keys::partition("t", 1), "{}", 12))});
    CHECK(next->topic("bad") == nullptr);
    CHECK(next->partition("t", PartitionId(1))->leader == kNoNode);
    CHECK(next->partition("t", PartitionId(0))->leader == NodeId(1));
    CHECK(f.warnings.size() == 2);
  }
}
