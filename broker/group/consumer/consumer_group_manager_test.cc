// The KIP-848 consumer group coordinator driven by heartbeats on a virtual
// clock and an in-memory __consumer_offsets: joins, reconciliation without
// two owners of a partition, epochs and their errors, timeouts, static
// members, regex subscriptions, and a reload from the records written.
#include "broker/group/consumer/consumer_group_manager.h"

#include <catch2/catch.hpp>

#include <memory>

#include "broker/group/testing/coordinator_fakes.h"
#include "protocol/coordinator_record.h"

using namespace runnel::broker::group;
using namespace runnel::broker::group::consumer;
using namespace runnel::broker::group::testing;
using runnel::protocol::ErrorCode;

namespace {

struct Topics : TopicsImage {
  std::map<std::string, TopicImage> topics;
  uint8_t next_id = 1;

  TopicId add(const std::string& name, int32_t partitions) {
    TopicImage t;
    t.id.bytes[15] = next_id++;
    t.partitions = partitions;
    topics[name] = t;
    return t.id;
  }
  std::optional<TopicImage> find(const std::string& name) const override {
    auto it = topics.find(name);
    if (it == topics.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::string> name_of(const TopicId& id) const override {
    for (const auto& [name, t] : topics)
      if (t.id == id) return name;
    return std::nullopt;
  }
  void for_each(const std::function<void(const std::string&, const TopicImage&)>& f) const override {
    for (const auto& [name, t] : topics) f(name, t);
  }
};

struct Fixture {
  int64_t now = 1'000'000;
  FixtureClock clock{now};
  MemoryStore store;
  VirtualTimer timer;
  ConsumerGroupConfig config;
  Topics topics;
  TopicId foo;
  bool classic = false;
  std::unique_ptr<ConsumerGroupManager> mgr;

  Fixture() {
    foo = topics.add("foo", 3);
    topics.add("__consumer_offsets", 50);
    make();
  }
  void make() {
    mgr = std::make_unique<ConsumerGroupManager>(
        config, store, clock, timer, topics, [](const std::string&) { return 0; },
        [this](const std::string&) { return classic; });
  }
  void advance(int64_t ms) { timer.advance_to(now, now + ms); }
  // A new manager here, loaded from the records `other` wrote.
  void load_from(const Fixture& other) {
    topics = other.topics;
    make();
    for (const auto& [partition, r] : other.store.records) {
      std::optional<runnel::protocol::ByteView> value;
      if (r.value) value = runnel::protocol::ByteView(*r.value);
      REQUIRE(mgr->replay(r.key, value));
    }
  }

  ConsumerHeartbeatResult heartbeat(ConsumerHeartbeat r) {
    std::optional<ConsumerHeartbeatResult> out;
    mgr->heartbeat(std::move(r), [&](ConsumerHeartbeatResult res) { out = std::move(res); });
    REQUIRE(out.has_value());
    return *out;
  }
  static ConsumerHeartbeat joining(const std::string& member, std::vector<std::string> names = {"foo"}) {
    ConsumerHeartbeat r;
    r.group_id = "g";
    r.member_id = member;
    r.member_epoch = 0;
    r.rebalance_timeout_ms = 30000;
    r.subscribed_topic_names = std::move(names);
    r.owned = Assignment{};
    r.client_id = "client-" + member;
    r.client_host = "/127.0.0.1";
    return r;
  }
  static ConsumerHeartbeat beat(const std::string& member, int32_t epoch, std::optional<Assignment> owned) {
    ConsumerHeartbeat r;
    r.group_id = "g";
    r.member_id = member;
    r.member_epoch = epoch;
    r.owned = std::move(owned);
    r.client_id = "client-" + member;
    r.client_host = "/127.0.0.1";
    return r;
  }
  const ConsumerGroup& group() const {
    const ConsumerGroup* g = mgr->find("g");
    REQUIRE(g != nullptr);
    return *g;
  }
  const ConsumerGroupMember& member(const std::string& id) const {
    auto it = group().members.find(id);
    REQUIRE(it != group().members.end());
    return it->second;
  }
  std::vector<int16_t> record_types_since(size_t from) const {
    std::vector<int16_t> types;
    for (size_t i = from; i < store.records.size(); ++i)
      types.push_back(*runnel::protocol::record_type(store.records[i].second.key));
    return types;
  }
};

Partitions all_of(const Assignment& a, const TopicId& t) {
  auto it = a.find(t);
  return it == a.end() ? Partitions{} : it->second;
}

}  // namespace

TEST_CASE("malformed heartbeats get Kafka's errors", "[consumer_group]") {
  Fixture f;
  auto expect = [&](ConsumerHeartbeat r, ErrorCode e, const std::string& message) {
    auto res = f.heartbeat(std::move(r));
    CHECK(res.error == e);
    CHECK(res.error_message.value_or("") == message);
  };
  auto r = Fixture::joining("m1");
  r.group_id = "";
  expect(r, ErrorCode::invalid_request, "GroupId can't be empty.");
  r = Fixture::joining("");
  expect(r, ErrorCode::invalid_request, "MemberId can't be empty.");
  r = Fixture::joining("m1");
  r.rebalance_timeout_ms = -1;
  expect(r, ErrorCode::invalid_request, "RebalanceTimeoutMs must be provided in first request.");
  r = Fixture::joining("m1");
  r.owned = Assignment{{f.foo, {0}}};
  expect(r, ErrorCode::invalid_request, "TopicPartitions must be empty when (re-)joining.");
  r = Fixture::joining("m1");
  r.subscribed_topic_names.reset();
  expect(r, ErrorCode::invalid_request, "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.");
  expect(Fixture::beat("m1", -3, std::nullopt), ErrorCode::invalid_request, "MemberEpoch is invalid.");
  expect(Fixture::beat("m1", -2, std::nullopt), ErrorCode::invalid_request, "InstanceId can't be null.");
  r = Fixture::joining("m1");
  r.server_assignor = "sticky";
  expect(r, ErrorCode::unsupported_assignor, "ServerAssignor sticky is not supported. Supported assignors: uniform, range.");
  r = Fixture::joining("m1");
  r.subscribed_topic_regex = "foo(";
  auto bad_regex = f.heartbeat(r);
  CHECK(bad_regex.error == ErrorCode::invalid_regular_expression);
  expect(Fixture::beat("m1", 1, Assignment{}), ErrorCode::group_id_not_found, "Consumer group g not found.");
  CHECK(f.store.records.empty());
  CHECK(f.mgr->find("g") == nullptr);
}

TEST_CASE("a first member gets every partition at epoch 1, in Kafka's record order", "[consumer_group]") {
  Fixture f;
  auto res = f.heartbeat(Fixture::joining("m1"));
  REQUIRE(res.error == ErrorCode::none);
  CHECK(res.member_id == "m1");
  CHECK(res.member_epoch == 1);
  CHECK(res.heartbeat_interval_ms == 5000);
  REQUIRE(res.assignment.has_value());
  CHECK(*res.assignment == Assignment{{f.foo, {0, 1, 2}}});
  // Subscription, group epoch, target member, target epoch, current assignment.
  CHECK(f.record_types_since(0) == std::vector<int16_t>{5, 3, 7, 6, 8});
  CHECK(f.group().group_epoch == 1);
  CHECK(f.group().assignment_epoch == 1);
  CHECK(f.group().state() == ConsumerGroupState::stable);

  SECTION("a steady heartbeat changes nothing and carries no assignment") {
    const size_t written = f.store.records.size();
    auto again = f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
    CHECK(again.error == ErrorCode::none);
    CHECK(again.member_epoch == 1);
    CHECK_FALSE(again.assignment.has_value());
    CHECK(f.store.records.size() == written);
  }
}

TEST_CASE("a second member: revoke first, then assign, never two owners", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  auto m2 = f.heartbeat(Fixture::joining("m2"));
  REQUIRE(m2.error == ErrorCode::none);
  CHECK(m2.member_epoch == 2);
  CHECK(f.group().group_epoch == 2);
  CHECK(f.group().assignment_epoch == 2);
  const Partitions m2_target = all_of(f.group().target_of("m2"), f.foo);
  REQUIRE(m2_target.size() == 1);
  // m1 still owns it: m2 waits for it at epoch 2.
  CHECK(m2.assignment == Assignment{});
  CHECK(f.member("m2").state == MemberState::unreleased_partitions);
  CHECK(f.group().state() == ConsumerGroupState::reconciling);

  // m1 is asked to revoke it and stays at epoch 1.
  auto m1 = f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
  CHECK(m1.member_epoch == 1);
  REQUIRE(m1.assignment.has_value());
  CHECK(all_of(*m1.assignment, f.foo).size() == 2);
  CHECK(f.member("m1").state == MemberState::unrevoked_partitions);
  CHECK(f.member("m1").partitions_pending_revocation == Assignment{{f.foo, m2_target}});

  // Until m1 reports it gone, m2 still gets nothing.
  CHECK_FALSE(f.heartbeat(Fixture::beat("m2", 2, Assignment{})).assignment.has_value());

  auto m1_revoked = f.heartbeat(Fixture::beat("m1", 1, *m1.assignment));
  CHECK(m1_revoked.member_epoch == 2);
  CHECK(f.member("m1").state == MemberState::stable);
  auto m2_now = f.heartbeat(Fixture::beat("m2", 2, Assignment{}));
  REQUIRE(m2_now.assignment.has_value());
  CHECK(*m2_now.assignment == Assignment{{f.foo, m2_target}});
  CHECK(f.group().state() == ConsumerGroupState::stable);
}

TEST_CASE("member epochs: ahead or behind is fenced, a lost answer's epoch is not", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  f.heartbeat(Fixture::joining("m2"));
  auto m1 = f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
  f.heartbeat(Fixture::beat("m1", 1, *m1.assignment));  // now epoch 2, previous 1
  REQUIRE(f.member("m1").member_epoch == 2);

  CHECK(f.heartbeat(Fixture::beat("m1", 3, *m1.assignment)).error == ErrorCode::fenced_member_epoch);
  CHECK(f.heartbeat(Fixture::beat("m1", 0 + 1, Assignment{{f.foo, {0, 1, 2}}})).error ==
        ErrorCode::fenced_member_epoch);  // owns more than it is assigned
  CHECK(f.heartbeat(Fixture::beat("m1", 1, std::nullopt)).error == ErrorCode::fenced_member_epoch);
  auto lost = f.heartbeat(Fixture::beat("m1", 1, *m1.assignment));
  CHECK(lost.error == ErrorCode::none);
  CHECK(lost.member_epoch == 2);
  CHECK(f.heartbeat(Fixture::beat("nobody", 2, Assignment{})).error == ErrorCode::unknown_member_id);
}

TEST_CASE("a member that stops heartbeating is fenced after the session timeout", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  f.advance(40000);
  f.heartbeat(Fixture::joining("m2"));
  f.advance(6000);  // m1's 45 s have passed; m2's have not
  CHECK_FALSE(f.group().members.contains("m1"));
  CHECK(f.group().members.contains("m2"));
  CHECK(f.group().group_epoch == 3);
  CHECK(f.heartbeat(Fixture::beat("m1", 1, Assignment{})).error == ErrorCode::unknown_member_id);
  // m2 takes everything at the next epoch.
  auto m2 = f.heartbeat(Fixture::beat("m2", 2, Assignment{}));
  CHECK(m2.member_epoch == 3);
  CHECK(m2.assignment == Assignment{{f.foo, {0, 1, 2}}});
}

TEST_CASE("a member that does not revoke within its rebalance timeout is fenced", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  f.heartbeat(Fixture::joining("m2"));
  f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
  REQUIRE(f.member("m1").state == MemberState::unrevoked_partitions);
  // Heartbeats keep its session alive, but it never lets the partition go:
  // it is fenced once its 30 s rebalance timeout has passed.
  const int64_t asked = f.now;
  int64_t fenced_after = -1;
  for (int i = 0; i < 8 && fenced_after < 0; ++i) {
    f.advance(5000);
    auto m1 = f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
    if (m1.error == ErrorCode::unknown_member_id) fenced_after = f.now - asked;
    f.heartbeat(Fixture::beat("m2", 2, Assignment{}));
  }
  CHECK(fenced_after == 30000);
  CHECK_FALSE(f.group().members.contains("m1"));
  CHECK(f.member("m2").assigned_partitions == Assignment{{f.foo, {0, 1, 2}}});
}

TEST_CASE("leaving: -1 removes the member and moves the group epoch", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  const size_t written = f.store.records.size();
  auto left = f.heartbeat(Fixture::beat("m1", -1, std::nullopt));
  CHECK(left.error == ErrorCode::none);
  CHECK(left.member_epoch == -1);
  // Current assignment, target and subscription tombstones, then the epoch.
  CHECK(f.record_types_since(written) == std::vector<int16_t>{8, 7, 5, 3});
  for (size_t i = written; i < written + 3; ++i) CHECK_FALSE(f.store.records[i].second.value.has_value());
  CHECK(f.group().members.empty());
  CHECK(f.group().group_epoch == 2);
  CHECK(f.group().state() == ConsumerGroupState::empty);
  CHECK(f.heartbeat(Fixture::beat("m1", -1, std::nullopt)).error == ErrorCode::unknown_member_id);
}

TEST_CASE("a static member leaves with -2 and its next instance takes its place without a rebalance",
          "[consumer_group]") {
  Fixture f;
  auto a = Fixture::joining("a1");
  a.instance_id = "instance-a";
  f.heartbeat(a);
  auto b = Fixture::joining("b1");
  b.instance_id = "instance-b";
  f.heartbeat(b);
  f.heartbeat(Fixture::beat("a1", 1, Assignment{{f.foo, {0, 1, 2}}}));
  auto a_owned = f.member("a1").assigned_partitions;
  f.heartbeat(Fixture::beat("a1", 1, a_owned));
  REQUIRE(f.member("a1").member_epoch == 2);
  const int32_t epoch = f.group().group_epoch;

  // Another member cannot take an instance id still in use.
  auto thief = Fixture::joining("a2");
  thief.instance_id = "instance-a";
  CHECK(f.heartbeat(thief).error == ErrorCode::unreleased_instance_id);

  auto leave = Fixture::beat("a1", -2, std::nullopt);
  leave.instance_id = "instance-a";
  CHECK(f.heartbeat(leave).member_epoch == -2);
  CHECK(f.member("a1").member_epoch == -2);

  auto back = f.heartbeat(thief);
  REQUIRE(back.error == ErrorCode::none);
  CHECK(back.member_id == "a2");
  CHECK(back.member_epoch == 2);
  CHECK(back.assignment == a_owned);
  CHECK_FALSE(f.group().members.contains("a1"));
  CHECK(f.group().group_epoch == epoch);
}

TEST_CASE("a regex subscription follows the topics, never internal ones", "[consumer_group]") {
  Fixture f;
  auto r = Fixture::joining("m1", {});
  r.subscribed_topic_regex = "fo.*|__.*";
  auto first = f.heartbeat(r);
  REQUIRE(first.error == ErrorCode::none);
  CHECK(*first.assignment == Assignment{{f.foo, {0, 1, 2}}});

  const TopicId four = f.topics.add("four", 2);
  f.topics.add("bar", 1);
  auto next = f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
  CHECK(next.member_epoch == 2);
  CHECK(next.assignment == Assignment{{f.foo, {0, 1, 2}}, {four, {0, 1}}});
}

TEST_CASE("partitions added to a subscribed topic move the group epoch", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  f.topics.topics["foo"].partitions = 5;
  auto res = f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
  CHECK(res.member_epoch == 2);
  CHECK(res.assignment == Assignment{{f.foo, {0, 1, 2, 3, 4}}});
}

TEST_CASE("group.consumer.max.size, a classic group's id, a failed write", "[consumer_group]") {
  Fixture f;
  f.config.max_size = 1;
  f.heartbeat(Fixture::joining("m1"));
  auto full = f.heartbeat(Fixture::joining("m2"));
  CHECK(full.error == ErrorCode::group_max_size_reached);
  CHECK(full.error_message == "The consumer group has reached its maximum capacity of 1 members.");

  f.classic = true;
  CHECK(f.heartbeat(Fixture::joining("m3")).error == ErrorCode::group_id_not_found);
  f.classic = false;

  f.config.max_size = 10;
  f.store.fail = true;
  f.store.fail_with = ErrorCode::not_enough_replicas;
  CHECK(f.heartbeat(Fixture::joining("m2")).error == ErrorCode::coordinator_not_available);
  CHECK_FALSE(f.group().members.contains("m2"));
  CHECK(f.group().group_epoch == 1);
}

TEST_CASE("a reload from the records written rebuilds the same groups", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  f.heartbeat(Fixture::joining("m2"));
  f.heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}));
  const ConsumerGroup before = f.group();

  Fixture g;
  g.load_from(f);
  const ConsumerGroup& after = g.group();
  CHECK(after.group_epoch == before.group_epoch);
  CHECK(after.assignment_epoch == before.assignment_epoch);
  CHECK(after.target == before.target);
  REQUIRE(after.members.size() == 2);
  for (const auto& [id, m] : before.members) {
    const ConsumerGroupMember& r = after.members.at(id);
    CHECK(r.member_epoch == m.member_epoch);
    CHECK(r.previous_member_epoch == m.previous_member_epoch);
    CHECK(r.state == m.state);
    CHECK(r.assigned_partitions == m.assigned_partitions);
    CHECK(r.partitions_pending_revocation == m.partitions_pending_revocation);
    CHECK(r.subscribed_topic_names == m.subscribed_topic_names);
    CHECK(r.client_id == m.client_id);
    CHECK(r.rebalance_timeout_ms == m.rebalance_timeout_ms);
  }
  // Sessions start at the load: unheard-of members are fenced in time.
  g.mgr->loaded([](int32_t) { return true; });
  g.advance(46000);
  CHECK(g.group().members.empty());
}

TEST_CASE("heartbeats queued behind a slow write drain without recursion", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  f.store.defer = true;
  std::optional<ConsumerHeartbeatResult> joined;
  f.mgr->heartbeat(Fixture::joining("m2"), [&](ConsumerHeartbeatResult r) { joined = std::move(r); });
  REQUIRE_FALSE(joined.has_value());
  // Steady heartbeats of m1 wait behind m2's write; none of them writes.
  constexpr int kQueued = 20000;
  int answered = 0;
  for (int i = 0; i < kQueued; ++i)
    f.mgr->heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}), [&](ConsumerHeartbeatResult r) {
      if (r.error == ErrorCode::none) ++answered;
    });
  CHECK(answered == 0);
  f.store.defer = false;
  f.store.complete_pending();
  REQUIRE(joined.has_value());
  CHECK(joined->error == ErrorCode::none);
  CHECK(answered == kQueued);
}

TEST_CASE("a heartbeat that waited past an unload answers NOT_COORDINATOR", "[consumer_group]") {
  Fixture f;
  bool served = true;
  f.mgr = std::make_unique<ConsumerGroupManager>(
      f.config, f.store, f.clock, f.timer, f.topics, [](const std::string&) { return 0; },
      [](const std::string&) { return false; }, [&](int32_t) { return served; });
  f.heartbeat(Fixture::joining("m1"));
  f.store.defer = true;
  f.mgr->heartbeat(Fixture::joining("m2"), [](ConsumerHeartbeatResult) {});
  std::optional<ConsumerHeartbeatResult> queued;
  f.mgr->heartbeat(Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}}),
                   [&](ConsumerHeartbeatResult r) { queued = std::move(r); });
  served = false;
  f.mgr->unload([](int32_t) { return true; });
  f.store.complete_pending();
  REQUIRE(queued.has_value());
  CHECK(queued->error == ErrorCode::not_coordinator);
}

TEST_CASE("a session timeout that waited behind the member's own heartbeat does not fence it", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  f.advance(40000);
  f.store.defer = true;
  // A heartbeat that writes (a new subscription) is in flight at the
  // session deadline: the timeout waits its turn behind it.
  auto change = Fixture::beat("m1", 1, Assignment{{f.foo, {0, 1, 2}}});
  change.subscribed_topic_names = std::vector<std::string>{"foo", "bar"};
  std::optional<ConsumerHeartbeatResult> changed;
  f.mgr->heartbeat(change, [&](ConsumerHeartbeatResult r) { changed = std::move(r); });
  f.advance(5000);  // m1's 45 s pass while it waits
  f.store.defer = false;
  f.store.complete_pending();
  REQUIRE(changed.has_value());
  CHECK(changed->error == ErrorCode::none);
  CHECK(f.group().members.contains("m1"));
}

TEST_CASE("a static member replaced while the target is recomputed keeps its target record", "[consumer_group]") {
  Fixture f;
  auto a = Fixture::joining("a1");
  a.instance_id = "instance-a";
  f.heartbeat(a);
  f.heartbeat(Fixture::joining("b1"));
  auto leave = Fixture::beat("a1", -2, std::nullopt);
  leave.instance_id = "instance-a";
  f.heartbeat(leave);
  f.heartbeat(Fixture::beat("b1", -1, std::nullopt));  // the next heartbeat recomputes the target
  auto back = Fixture::joining("a2");
  back.instance_id = "instance-a";
  REQUIRE(f.heartbeat(back).error == ErrorCode::none);
  REQUIRE(f.group().target_of("a2") == Assignment{{f.foo, {0, 1, 2}}});

  Fixture g;
  g.load_from(f);
  CHECK(g.group().target == f.group().target);
}

TEST_CASE("DeleteGroups of a consumer group: refused with members, tombstones once empty", "[consumer_group]") {
  Fixture f;
  f.heartbeat(Fixture::joining("m1"));
  auto remove = [&] {
    std::optional<ErrorCode> out;
    f.mgr->delete_group("g", [&](ErrorCode e) { out = e; });
    REQUIRE(out.has_value());
    return *out;
  };
  CHECK(remove() == ErrorCode::non_empty_group);
  f.heartbeat(Fixture::beat("m1", -1, std::nullopt));
  const size_t written = f.store.records.size();
  CHECK(remove() == ErrorCode::none);
  CHECK(f.record_types_since(written) == std::vector<int16_t>{6, 3});
  CHECK_FALSE(f.store.records.back().second.value.has_value());
  CHECK(f.mgr->find("g") == nullptr);
  CHECK(remove() == ErrorCode::group_id_not_found);
}
