#include "broker/group/group_coordinator.h"

#include <catch2/catch.hpp>

#include <tuple>

#include "broker/group/offsets_format.h"
#include "broker/group/testing/coordinator_fakes.h"

using namespace runnel::broker::group;
using namespace runnel::broker::group::testing;
using runnel::protocol::ErrorCode;

namespace {

struct Fixture {
  int64_t now = 1'000'000;
  FixtureClock clock{now};
  MemoryStore store;
  CoordinatorConfig config;
  VirtualTimer timer;
  NoTopics topics;
  std::unique_ptr<GroupCoordinator> gc;

  explicit Fixture(int32_t initial_delay = 0) {
    config.initial_rebalance_delay_ms = initial_delay;
    gc = std::make_unique<GroupCoordinator>(config, store, clock, timer, topics);
  }
  void advance(int64_t ms) { timer.advance_to(now, now + ms); }

  JoinRequest join_request(const std::string& member, int32_t session = 10000) {
    JoinRequest r;
    r.group_id = "g";
    r.member_id = member;
    r.require_known_member_id = true;
    r.client_id = "client";
    r.client_host = "/127.0.0.1";
    r.session_timeout_ms = session;
    r.rebalance_timeout_ms = 20000;
    r.protocol_type = "consumer";
    r.protocols = {{"range", {1, 2}}};
    return r;
  }

  // Joins and returns the result slot (filled now or later).
  std::shared_ptr<std::optional<JoinResult>> join(JoinRequest r) {
    auto slot = std::make_shared<std::optional<JoinResult>>();
    gc->join(std::move(r), [slot](JoinResult res) { *slot = std::move(res); });
    return slot;
  }
  std::shared_ptr<std::optional<SyncResult>> sync(const std::string& member, int32_t generation,
                                                  std::vector<std::pair<std::string, Bytes>> assignments = {}) {
    auto slot = std::make_shared<std::optional<SyncResult>>();
    SyncRequest r;
    r.group_id = "g";
    r.member_id = member;
    r.generation = generation;
    r.assignments = std::move(assignments);
    gc->sync(std::move(r), [slot](SyncResult res) { *slot = std::move(res); });
    return slot;
  }

  // A dynamic member through the KIP-394 round trip; returns its id.
  std::string join_member() {
    auto first = join(join_request(""));
    REQUIRE(first->has_value());
    REQUIRE((*first)->error == ErrorCode::member_id_required);
    return (*first)->member_id;
  }

  // A static member joins alone: generation 1, CompletingRebalance. Returns its member id.
  std::string join_static_member(const std::string& instance) {
    auto req = join_request("");
    req.group_instance_id = instance;
    auto j = join(req);
    advance(1);
    REQUIRE(j->has_value());
    REQUIRE((*j)->error == ErrorCode::none);
    return (*j)->member_id;
  }

  // One member, Stable at generation 1.
  std::string stable_single_member() {
    std::string id = join_member();
    auto j = join(join_request(id));
    advance(1);
    REQUIRE(j->has_value());
    REQUIRE((*j)->error == ErrorCode::none);
    REQUIRE((*j)->generation == 1);
    auto s = sync(id, 1, {{id, {9}}});
    REQUIRE(s->has_value());
    REQUIRE((*s)->error == ErrorCode::none);
    REQUIRE(gc->find("g")->state == GroupState::stable);
    return id;
  }

  ErrorCode commit(const std::string& member, int32_t generation, int64_t offset = 5,
                   std::optional<std::string> instance = std::nullopt, bool v9 = false) {
    OffsetCommitRequest r;
    r.group_id = "g";
    r.member_id = member;
    r.generation = generation;
    r.group_instance_id = std::move(instance);
    r.unknown_group_not_found = v9;
    r.entries.push_back({"t", 0, offset, -1, std::string("m"), ErrorCode::none});
    auto answer = commit_async(std::move(r));
    REQUIRE(answer->has_value());
    return (*answer)->entries[0].error;
  }
  std::shared_ptr<std::optional<OffsetCommitRequest>> commit_async(OffsetCommitRequest r) {
    auto slot = std::make_shared<std::optional<OffsetCommitRequest>>();
    gc->commit_offsets(std::move(r), [slot](OffsetCommitRequest done) { *slot = std::move(done); });
    return slot;
  }
  ErrorCode delete_group(const std::string& id) {
    std::optional<ErrorCode> answer;
    gc->delete_group(id, [&answer](ErrorCode e) { answer = e; });
    REQUIRE(answer.has_value());
    return *answer;
  }
  ErrorCode delete_offsets(const std::string& id, const std::vector<TopicPartition>& tps,
                           std::vector<ErrorCode>& errors) {
    std::optional<ErrorCode> answer;
    gc->delete_offsets(id, tps, [&](ErrorCode e, std::vector<ErrorCode> es) {
      answer = e;
      errors = std::move(es);
    });
    REQUIRE(answer.has_value());
    return *answer;
  }
};

}  // namespace

TEST_CASE("offsets partition follows Java's String.hashCode") {
  CHECK(java_string_hash("") == 0);
  CHECK(java_string_hash("abc") == 96354);
  CHECK(java_string_hash("hello world") == 1794106052);
  CHECK(offsets_partition_for("abc", 50) == 96354 % 50);
  int32_t h = java_string_hash("console-consumer-12345");
  CHECK(offsets_partition_for("console-consumer-12345", 50) == (h < 0 ? -h : h) % 50);
}

TEST_CASE("record formats round-trip in Kafka's layout") {
  Bytes key = encode_key(OffsetCommitKey{"g", "t", 3});
  CHECK(key == Bytes{0, 1, 0, 1, 'g', 0, 1, 't', 0, 0, 0, 3});
  auto k = decode_key({key.data(), key.size()});
  REQUIRE(std::holds_alternative<OffsetCommitKey>(k));
  CHECK(std::get<OffsetCommitKey>(k).partition == 3);

  Bytes value = encode_value(OffsetCommitValue{42, 7, "meta", 1000, std::nullopt});
  CHECK(value.size() == 2 + 8 + 4 + 2 + 4 + 8);
  CHECK(value[1] == 3);
  auto v = decode_offset_value({value.data(), value.size()});
  REQUIRE(v);
  CHECK(v->offset == 42);
  CHECK(v->leader_epoch == 7);
  CHECK(v->metadata == "meta");

  Bytes v1 = encode_value(OffsetCommitValue{42, 7, "", 1000, 5000});
  CHECK(v1[1] == 1);
  CHECK(decode_offset_value({v1.data(), v1.size()})->expire_timestamp == 5000);

  GroupMetadataValue gv;
  gv.protocol_type = "consumer";
  gv.generation = 4;
  gv.protocol = "range";
  gv.leader = "m1";
  gv.current_state_timestamp = 99;
  gv.members.push_back({"m1", std::string("i1"), "c", "/h", 300, 10, {1}, {2, 3}});
  Bytes gb = encode_value(gv);
  auto back = decode_group_value({gb.data(), gb.size()});
  REQUIRE(back);
  CHECK(back->generation == 4);
  CHECK(back->members.at(0).group_instance_id == "i1");
  CHECK(back->members.at(0).assignment == Bytes{2, 3});
  Bytes gk = encode_key(GroupMetadataKey{"g"});
  CHECK(gk == Bytes{0, 2, 0, 1, 'g'});
}

TEST_CASE("malformed offsets records fail their decode within bounds") {
  // Key: string length past the end, negative, and a huge one.
  Bytes past{0, 1, 0, 9, 'g'};
  CHECK(std::holds_alternative<std::monostate>(decode_key({past.data(), past.size()})));
  Bytes negative{0, 1, 0xff, 0xfe, 'g'};
  CHECK(std::holds_alternative<std::monostate>(decode_key({negative.data(), negative.size()})));
  Bytes huge{0, 2, 0x7f, 0xff};
  CHECK(std::holds_alternative<std::monostate>(decode_key({huge.data(), huge.size()})));
  Bytes null_group{0, 2, 0xff, 0xff};
  CHECK(std::holds_alternative<std::monostate>(decode_key({null_group.data(), null_group.size()})));

  // Offset value: every truncation of a good record fails.
  Bytes value = encode_value(OffsetCommitValue{42, 7, "meta", 1000, std::nullopt});
  for (size_t n = 0; n < value.size(); ++n) CHECK_FALSE(decode_offset_value({value.data(), n}));
  Bytes bad_meta = value;
  bad_meta[14] = 0x7f;  // metadata length (after version, offset, leader epoch)
  CHECK_FALSE(decode_offset_value({bad_meta.data(), bad_meta.size()}));

  // Group value: a member's subscription length huge, then negative.
  GroupMetadataValue gv;
  gv.protocol_type = "consumer";
  gv.members.push_back({"m1", std::nullopt, "c", "/h", 300, 10, {1}, {2, 3}});
  Bytes gb = encode_value(gv);
  for (size_t n = 0; n < gb.size(); ++n) CHECK_FALSE(decode_group_value({gb.data(), n}));
  // The assignment's i32 length sits 6 bytes before the end (length + 2 bytes).
  Bytes huge_bytes = gb;
  huge_bytes[gb.size() - 6] = 0x7f;
  CHECK_FALSE(decode_group_value({huge_bytes.data(), huge_bytes.size()}));
  Bytes negative_bytes = gb;
  negative_bytes[gb.size() - 6] = 0x80;
  CHECK_FALSE(decode_group_value({negative_bytes.data(), negative_bytes.size()}));
}

TEST_CASE("a member joins, syncs and becomes Stable") {
  Fixture f;
  std::string id = f.stable_single_member();
  CHECK(id.rfind("client-", 0) == 0);
  CHECK(f.gc->heartbeat("g", id, std::nullopt, 1) == ErrorCode::none);
  // The leader's assignment was stored as a GroupMetadata record.
  REQUIRE(!f.store.records.empty());
  auto k = decode_key({f.store.records.back().second.key.data(), f.store.records.back().second.key.size()});
  CHECK(std::holds_alternative<GroupMetadataKey>(k));
}

TEST_CASE("JoinGroup v4+ requires a member id first") {
  Fixture f;
  auto r = f.join(f.join_request(""));
  REQUIRE(r->has_value());
  CHECK((*r)->error == ErrorCode::member_id_required);
  CHECK(!(*r)->member_id.empty());
  CHECK(f.gc->find("g")->pending_members.count((*r)->member_id) == 1);
}

TEST_CASE("INVALID_SESSION_TIMEOUT outside the configured bounds") {
  Fixture f;
  auto r = f.join(f.join_request("", 100));
  REQUIRE(r->has_value());
  CHECK((*r)->error == ErrorCode::invalid_session_timeout);
  auto r2 = f.join(f.join_request("", 1800001));
  CHECK((*r2)->error == ErrorCode::invalid_session_timeout);
}

TEST_CASE("UNKNOWN_MEMBER_ID for members the group does not know") {
  Fixture f;
  auto r = f.join(f.join_request("nobody"));
  CHECK((*r)->error == ErrorCode::unknown_member_id);
  f.stable_single_member();
  CHECK(f.gc->heartbeat("g", "nobody", std::nullopt, 1) == ErrorCode::unknown_member_id);
  CHECK((*f.sync("nobody", 1))->error == ErrorCode::unknown_member_id);
  CHECK(f.commit("nobody", 1) == ErrorCode::unknown_member_id);
  auto leave = f.gc->leave("g", {{"nobody", std::nullopt}});
  CHECK(leave.members.at(0) == ErrorCode::unknown_member_id);
}

TEST_CASE("ILLEGAL_GENERATION for a stale generation") {
  Fixture f;
  std::string id = f.stable_single_member();
  CHECK(f.gc->heartbeat("g", id, std::nullopt, 0) == ErrorCode::illegal_generation);
  CHECK((*f.sync(id, 7))->error == ErrorCode::illegal_generation);
  CHECK(f.commit(id, 0) == ErrorCode::illegal_generation);
  CHECK(f.commit(id, 1) == ErrorCode::none);
}

TEST_CASE("REBALANCE_IN_PROGRESS while the group rebalances") {
  Fixture f;
  std::string a = f.stable_single_member();
  // A second member joins: the group prepares a rebalance and waits for a.
  std::string b = f.join_member();
  auto jb = f.join(f.join_request(b));
  CHECK(!jb->has_value());
  CHECK(f.gc->find("g")->state == GroupState::preparing_rebalance);
  CHECK(f.gc->heartbeat("g", a, std::nullopt, 1) == ErrorCode::rebalance_in_progress);
  CHECK((*f.sync(a, 1))->error == ErrorCode::rebalance_in_progress);
  // Commits of the current generation are still allowed while preparing.
  CHECK(f.commit(a, 1) == ErrorCode::none);
  // a rejoins: the join completes, both learn generation 2; a is the leader.
  auto ja = f.join(f.join_request(a));
  REQUIRE(ja->has_value());
  REQUIRE(jb->has_value());
  CHECK((*ja)->generation == 2);
  CHECK((*jb)->generation == 2);
  CHECK((*ja)->leader == a);
  CHECK((*ja)->members.size() == 2);
  CHECK((*jb)->members.empty());
  CHECK(f.gc->find("g")->state == GroupState::completing_rebalance);
  // CompletingRebalance: commits answer REBALANCE_IN_PROGRESS.
  CHECK(f.commit(a, 2) == ErrorCode::rebalance_in_progress);
  // The follower's sync waits for the leader's assignment.
  auto sb = f.sync(b, 2);
  CHECK(!sb->has_value());
  auto sa = f.sync(a, 2, {{a, {1}}, {b, {2}}});
  REQUIRE(sb->has_value());
  CHECK((*sb)->assignment == Bytes{2});
  CHECK((*sa)->assignment == Bytes{1});
  CHECK(f.gc->find("g")->state == GroupState::stable);
}

TEST_CASE("a member whose session expires is removed and the group rebalances") {
  Fixture f;
  std::string a = f.stable_single_member();
  f.advance(10001);
  const Group* g = f.gc->find("g");
  REQUIRE(g);
  CHECK(g->members.empty());
  CHECK(g->state == GroupState::empty);
  CHECK(g->generation == 2);
  CHECK(f.gc->heartbeat("g", a, std::nullopt, 1) == ErrorCode::unknown_member_id);
}

TEST_CASE("LeaveGroup empties the group, simple consumers commit with generation -1") {
  Fixture f;
  std::string a = f.stable_single_member();
  auto r = f.gc->leave("g", {{a, std::nullopt}});
  CHECK(r.members.at(0) == ErrorCode::none);
  CHECK(f.gc->find("g")->state == GroupState::empty);
  CHECK(f.commit("", -1) == ErrorCode::none);
  std::vector<FetchedOffset> out;
  CHECK(f.gc->fetch_offsets("g", std::nullopt, out) == ErrorCode::none);
  REQUIRE(out.size() == 1);
  CHECK(out[0].offset == 5);
}

TEST_CASE("INCONSISTENT_GROUP_PROTOCOL when protocols do not overlap") {
  Fixture f;
  f.stable_single_member();
  auto req = f.join_request("");
  req.protocols = {{"roundrobin", {}}};
  auto r = f.join(req);
  CHECK((*r)->error == ErrorCode::inconsistent_group_protocol);
}

TEST_CASE("GROUP_MAX_SIZE_REACHED beyond group.max.size") {
  Fixture f;
  f.config.max_size = 1;
  f.gc = std::make_unique<GroupCoordinator>(f.config, f.store, f.clock, f.timer, f.topics);
  f.stable_single_member();
  auto r = f.join(f.join_request(""));
  CHECK((*r)->error == ErrorCode::group_max_size_reached);
}

TEST_CASE("COORDINATOR_LOAD_IN_PROGRESS while the partition loads") {
  Fixture f;
  int32_t p = f.gc->partition_for("g");
  f.gc->begin_loading(p);
  CHECK((*f.join(f.join_request("")))->error == ErrorCode::coordinator_load_in_progress);
  CHECK(f.commit("", -1) == ErrorCode::coordinator_load_in_progress);
  std::vector<FetchedOffset> out;
  CHECK(f.gc->fetch_offsets("g", std::nullopt, out) == ErrorCode::coordinator_load_in_progress);
  CHECK(f.delete_group("g") == ErrorCode::coordinator_load_in_progress);
  f.gc->end_loading(p);
  CHECK((*f.join(f.join_request("")))->error == ErrorCode::member_id_required);
}

TEST_CASE("DeleteGroups: GROUP_ID_NOT_FOUND and NON_EMPTY_GROUP") {
  Fixture f;
  CHECK(f.delete_group("g") == ErrorCode::group_id_not_found);
  std::string a = f.stable_single_member();
  CHECK(f.delete_group("g") == ErrorCode::non_empty_group);
  f.gc->leave("g", {{a, std::nullopt}});
  CHECK(f.delete_group("g") == ErrorCode::none);
  CHECK(f.gc->find("g") == nullptr);
  // The group's tombstone is the last record written.
  CHECK(!f.store.records.back().second.value.has_value());
}

TEST_CASE("offsets and groups survive a reload from the records") {
  Fixture f;
  std::string a = f.stable_single_member();
  CHECK(f.commit(a, 1, 77) == ErrorCode::none);

  MemoryStore store2;
  VirtualTimer timer2;
  GroupCoordinator reloaded(f.config, store2, f.clock, timer2, f.topics);
  int32_t p = reloaded.partition_for("g");
  reloaded.begin_loading(p);
  for (auto& [part, r] : f.store.records) {
    std::optional<ByteView> value;
    if (r.value) value = ByteView(r.value->data(), r.value->size());
    reloaded.replay(part, {r.key.data(), r.key.size()}, value);
  }
  reloaded.end_loading(p);
  const Group* g = reloaded.find("g");
  REQUIRE(g);
  CHECK(g->state == GroupState::stable);
  CHECK(g->generation == 1);
  CHECK(g->members.count(a) == 1);
  CHECK(g->members.at(a).assignment == Bytes{9});
  std::vector<FetchedOffset> out;
  reloaded.fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out);
  CHECK(out.at(0).offset == 77);
}

TEST_CASE("a static member restarting keeps its place without a rebalance") {
  Fixture f;
  std::string old_id = f.join_static_member("instance-1");
  auto s = f.sync(old_id, 1, {{old_id, {4}}});
  REQUIRE(f.gc->find("g")->state == GroupState::stable);
  // Restart: a new join with the same instance id and no member id.
  auto req = f.join_request("");
  req.group_instance_id = "instance-1";
  auto j2 = f.join(req);
  REQUIRE(j2->has_value());
  CHECK((*j2)->error == ErrorCode::none);
  CHECK((*j2)->generation == 1);
  CHECK((*j2)->member_id != old_id);
  CHECK(f.gc->find("g")->state == GroupState::stable);
  // The old identity is fenced.
  CHECK(f.gc->heartbeat("g", old_id, std::string("instance-1"), 1) == ErrorCode::fenced_instance_id);
  CHECK((*f.sync((*j2)->member_id, 1))->assignment == Bytes{4});
}

TEST_CASE("offsets expire after retention once the group is empty") {
  Fixture f;
  CHECK(f.commit("", -1) == ErrorCode::none);
  f.now += f.config.offsets_retention_ms + 1;
  f.gc->expire_offsets();
  CHECK(f.gc->find("g") == nullptr);
}

TEST_CASE("OffsetDelete refuses topics the group consumes") {
  Fixture f;
  CHECK(f.commit("", -1) == ErrorCode::none);
  std::vector<ErrorCode> errors;
  CHECK(f.delete_offsets("nope", {{"t", 0}}, errors) == ErrorCode::group_id_not_found);
  CHECK(f.delete_offsets("g", {{"t", 0}}, errors) == ErrorCode::none);
  CHECK(errors.at(0) == ErrorCode::none);
  std::vector<FetchedOffset> out;
  f.gc->fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out);
  CHECK(out.at(0).offset == -1);
}

namespace {

// Two members join together: generation 1, CompletingRebalance, the leader first.
std::pair<std::string, std::string> two_members_joined(Fixture& f) {
  std::string a = f.join_member();
  std::string b = f.join_member();
  auto ja = f.join(f.join_request(a));
  auto jb = f.join(f.join_request(b));
  f.advance(1);  // b joined during the initial delay: it is extended (by 0 ms)
  f.advance(1);
  REQUIRE(ja->has_value());
  REQUIRE(jb->has_value());
  REQUIRE((*ja)->generation == 1);
  REQUIRE(f.gc->find("g")->state == GroupState::completing_rebalance);
  std::string leader = (*ja)->leader;
  return {leader, leader == a ? b : a};
}

}  // namespace

TEST_CASE("Heartbeat answers NONE while the group completes its rebalance") {
  // Kafka: clients may heartbeat between their JoinGroup and SyncGroup.
  Fixture f;
  auto [leader, follower] = two_members_joined(f);
  CHECK(f.gc->heartbeat("g", follower, std::nullopt, 1) == ErrorCode::none);
  CHECK(f.gc->heartbeat("g", leader, std::nullopt, 1) == ErrorCode::none);
  CHECK(f.gc->find("g")->state == GroupState::completing_rebalance);
}

TEST_CASE("a member that joined but never sends SyncGroup is removed after the rebalance timeout") {
  Fixture f;
  auto [leader, follower] = two_members_joined(f);
  auto sl = f.sync(leader, 1, {{leader, {1}}, {follower, {2}}});
  REQUIRE(sl->has_value());
  CHECK(f.gc->find("g")->state == GroupState::stable);
  // The follower heartbeats (its session stays alive) but never syncs.
  for (int i = 0; i < 3; ++i) {
    f.advance(6000);
    CHECK(f.gc->heartbeat("g", follower, std::nullopt, 1) == ErrorCode::none);
    CHECK(f.gc->heartbeat("g", leader, std::nullopt, 1) == ErrorCode::none);
  }
  CHECK(f.gc->find("g")->has(follower));  // 18 s: within the 20 s rebalance timeout
  f.advance(2000);
  const Group* g = f.gc->find("g");
  CHECK(!g->has(follower));
  CHECK(g->has(leader));
  CHECK(g->state == GroupState::preparing_rebalance);
  CHECK(f.gc->heartbeat("g", leader, std::nullopt, 1) == ErrorCode::rebalance_in_progress);
  CHECK(f.gc->heartbeat("g", follower, std::nullopt, 1) == ErrorCode::unknown_member_id);
  // The leader rejoins alone: generation 2 without the silent member.
  auto j = f.join(f.join_request(leader));
  REQUIRE(j->has_value());
  CHECK((*j)->generation == 2);
  CHECK((*j)->members.size() == 1);
}

TEST_CASE("a leader that never syncs is removed, the waiting follower is told to rejoin") {
  Fixture f;
  auto [leader, follower] = two_members_joined(f);
  auto sf = f.sync(follower, 1);
  CHECK(!sf->has_value());
  for (int i = 0; i < 3; ++i) {
    f.advance(6000);
    CHECK(f.gc->heartbeat("g", leader, std::nullopt, 1) == ErrorCode::none);
  }
  CHECK(!sf->has_value());
  f.advance(2000);
  REQUIRE(sf->has_value());
  CHECK((*sf)->error == ErrorCode::rebalance_in_progress);
  const Group* g = f.gc->find("g");
  CHECK(!g->has(leader));
  CHECK(g->has(follower));
  CHECK(g->state == GroupState::preparing_rebalance);
}

TEST_CASE("members that all sync in time are not removed by the sync deadline") {
  Fixture f;
  auto [leader, follower] = two_members_joined(f);
  f.sync(follower, 1);
  f.sync(leader, 1, {{leader, {1}}, {follower, {2}}});
  CHECK(!f.timer.has("sync-g"));
  for (int i = 0; i < 5; ++i) {
    f.advance(6000);
    f.gc->heartbeat("g", follower, std::nullopt, 1);
    f.gc->heartbeat("g", leader, std::nullopt, 1);
  }
  const Group* g = f.gc->find("g");
  CHECK(g->state == GroupState::stable);
  CHECK(g->members.size() == 2);
  CHECK(g->generation == 1);
}

// Kafka's ClassicGroup.validateOffsetCommit: the member first, then its
// generation, then the rebalance state. A consumer committing from its
// rebalance callback with an old generation must learn ILLEGAL_GENERATION
// (Java: CommitFailedException), not REBALANCE_IN_PROGRESS.
TEST_CASE("OffsetCommit during CompletingRebalance checks the member, then the generation, then the state") {
  Fixture f;
  auto [leader, follower] = two_members_joined(f);
  CHECK(f.commit("nobody", 1) == ErrorCode::unknown_member_id);
  CHECK(f.commit(follower, 0) == ErrorCode::illegal_generation);
  CHECK(f.commit(leader, -1) == ErrorCode::illegal_generation);
  // No member id and generation -1: only an Empty group takes such a commit.
  CHECK(f.commit("", -1) == ErrorCode::unknown_member_id);
  // A current member of the current generation: finish the rebalance first.
  CHECK(f.commit(leader, 1) == ErrorCode::rebalance_in_progress);
  CHECK(f.store.records.empty());
}

TEST_CASE("OffsetCommit from static members: FENCED_INSTANCE_ID, unknown instances UNKNOWN_MEMBER_ID") {
  Fixture f;
  const std::string id = f.join_static_member("instance-1");
  REQUIRE(f.gc->find("g")->state == GroupState::completing_rebalance);
  CHECK(f.commit("someone-else", 0, 5, "instance-1") == ErrorCode::fenced_instance_id);
  CHECK(f.commit(id, 1, 5, "instance-2") == ErrorCode::unknown_member_id);
  CHECK(f.commit(id, 0, 5, "instance-1") == ErrorCode::illegal_generation);
  CHECK(f.commit(id, 1, 5, "instance-1") == ErrorCode::rebalance_in_progress);
  f.sync(id, 1, {{id, {1}}});
  REQUIRE(f.gc->find("g")->state == GroupState::stable);
  CHECK(f.commit(id, 1, 5, "instance-2") == ErrorCode::unknown_member_id);
  CHECK(f.commit(id, 1, 5, "instance-1") == ErrorCode::none);
}

TEST_CASE("OffsetCommit to a group that does not exist: ILLEGAL_GENERATION, GROUP_ID_NOT_FOUND from v9") {
  Fixture f;
  CHECK(f.commit("m", 1) == ErrorCode::illegal_generation);
  CHECK(f.commit("m", 1, 5, std::nullopt, true) == ErrorCode::group_id_not_found);
  CHECK(f.gc->find("g") == nullptr);
  // Generation -1 creates the standalone consumer's group, with or without a member id.
  CHECK(f.commit("m", -1, 5, std::nullopt, true) == ErrorCode::none);
  CHECK(f.commit("", -1) == ErrorCode::none);
  CHECK(f.gc->find("g")->state == GroupState::empty);
}

TEST_CASE("Heartbeat, SyncGroup and LeaveGroup answer UNKNOWN_MEMBER_ID for an unknown group.instance.id") {
  // Kafka's validateMember: the instance id must name the member.
  Fixture f;
  std::string id = f.stable_single_member();
  CHECK(f.gc->heartbeat("g", id, std::string("instance-x"), 1) == ErrorCode::unknown_member_id);
  auto slot = std::make_shared<std::optional<SyncResult>>();
  SyncRequest sr;
  sr.group_id = "g";
  sr.member_id = id;
  sr.group_instance_id = "instance-x";
  sr.generation = 1;
  f.gc->sync(sr, [slot](SyncResult r) { *slot = std::move(r); });
  REQUIRE(slot->has_value());
  CHECK((*slot)->error == ErrorCode::unknown_member_id);
  auto leave = f.gc->leave("g", {{id, std::string("instance-x")}});
  CHECK(leave.members.at(0) == ErrorCode::unknown_member_id);
  CHECK(f.gc->find("g")->has(id));
  CHECK(f.gc->heartbeat("g", id, std::nullopt, 1) == ErrorCode::none);
}

// Kafka's InitialDelayedJoin applies whenever a rebalance starts from Empty,
// and every member arriving during it extends it (up to the rebalance
// timeout): a fleet of consumers restarting into a group that has existed
// for a long time forms one generation, not one per late member.
TEST_CASE("the initial rebalance delay is extended for a group that had generations before") {
  Fixture f(3000);
  // Generation 1 with one member, offsets committed, then the group empties.
  std::string old = f.join_member();
  auto j = f.join(f.join_request(old));
  f.advance(3000);
  REQUIRE(j->has_value());
  REQUIRE((*j)->generation == 1);
  f.sync(old, 1, {{old, {1}}});
  REQUIRE(f.commit(old, 1) == ErrorCode::none);
  f.gc->leave("g", {{old, std::nullopt}});
  const int32_t before = f.gc->find("g")->generation;
  REQUIRE(f.gc->find("g")->state == GroupState::empty);
  REQUIRE(before > 0);

  // Three members arrive 2 s apart; each arrival extends the 3 s delay.
  std::vector<std::shared_ptr<std::optional<JoinResult>>> joins;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) f.advance(2000);
    joins.push_back(f.join(f.join_request(f.join_member())));
  }
  for (auto& jr : joins) CHECK(!jr->has_value());
  for (int i = 0; i < 20 && !joins.back()->has_value(); ++i) f.advance(1000);  // up to the rebalance timeout
  for (auto& jr : joins) {
    REQUIRE(jr->has_value());
    CHECK((*jr)->error == ErrorCode::none);
    CHECK((*jr)->generation == before + 1);
  }
  CHECK(f.gc->find("g")->generation == before + 1);
  CHECK(f.gc->find("g")->members.size() == 3);
}

// The coordinator's timers: one per member session, one per pending join or
// sync, each due at its deadline and cancelled when its condition is met
// early, so an idle group waits on its members' sessions and nothing else.
TEST_CASE("a Stable group waits on nothing but its members' sessions") {
  Fixture f;
  std::string id = f.stable_single_member();
  REQUIRE(f.timer.tasks.size() == 1);
  REQUIRE(f.timer.has("heartbeat-g-" + id));
  CHECK(f.timer.tasks.at("heartbeat-g-" + id).deadline_ms == f.now + 10000);
  // A heartbeat moves the session's deadline instead of adding one.
  f.advance(4000);
  CHECK(f.gc->heartbeat("g", id, std::nullopt, 1) == ErrorCode::none);
  CHECK(f.timer.tasks.size() == 1);
  CHECK(f.timer.tasks.at("heartbeat-g-" + id).deadline_ms == f.now + 10000);
}

TEST_CASE("the join completes when the last member rejoins, and its timer and the sync timer go") {
  Fixture f;
  auto [leader, follower] = two_members_joined(f);
  CHECK(!f.timer.has("join-g"));
  REQUIRE(f.timer.has("sync-g"));
  f.sync(follower, 1);
  f.sync(leader, 1, {{leader, {1}}, {follower, {2}}});
  CHECK(!f.timer.has("sync-g"));
  // The leader rejoins: a rebalance with the rebalance timeout as its deadline...
  auto jl = f.join(f.join_request(leader));
  REQUIRE(f.timer.has("join-g"));
  CHECK(f.timer.tasks.at("join-g").deadline_ms == f.now + 20000);
  // ...that completes the moment the follower rejoins, without waiting for it.
  auto jf = f.join(f.join_request(follower));
  REQUIRE(jl->has_value());
  REQUIRE(jf->has_value());
  CHECK((*jf)->generation == 2);
  CHECK(!f.timer.has("join-g"));
  CHECK(f.timer.has("sync-g"));
}

TEST_CASE("a pending member that never comes back expires with its session, a deleted group leaves no timer") {
  Fixture f;
  std::string pending = f.join_member();
  REQUIRE(f.timer.has("heartbeat-g-" + pending));
  f.advance(10000);
  CHECK(f.gc->find("g")->pending_members.empty());
  CHECK(f.timer.tasks.empty());

  std::string a = f.stable_single_member();
  f.gc->leave("g", {{a, std::nullopt}});
  REQUIRE(f.delete_group("g") == ErrorCode::none);
  CHECK(f.timer.tasks.empty());
}

namespace {

// A standalone consumer's commit (generation -1) of offset `offset` on t-0.
OffsetCommitRequest standalone_commit(int64_t offset) {
  OffsetCommitRequest r;
  r.group_id = "g";
  r.generation = -1;
  r.entries.push_back({"t", 0, offset, -1, std::string("m"), ErrorCode::none});
  return r;
}

}  // namespace

// The store completes a write when the records are durable (with
// replication: when the high watermark passes them), not when append()
// returns. Nothing the write carries may take effect before that.
TEST_CASE("committed offsets take effect, and the commit is answered, only once the append completes") {
  Fixture f;
  f.store.defer = true;
  auto answer = f.commit_async(standalone_commit(42));
  CHECK_FALSE(answer->has_value());
  std::vector<FetchedOffset> out;
  f.gc->fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out);
  CHECK(out.at(0).offset == -1);
  f.store.complete_pending();
  REQUIRE(answer->has_value());
  CHECK((*answer)->entries[0].error == ErrorCode::none);
  out.clear();
  f.gc->fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out);
  CHECK(out.at(0).offset == 42);
}

// GroupCoordinatorService.handleOperationException's mapping of the append's error.
TEST_CASE("a commit whose append fails is answered as Kafka maps the append's error, and not applied") {
  Fixture f;
  f.store.defer = true;
  auto answer = f.commit_async(standalone_commit(42));
  f.store.complete_pending(std::make_error_code(std::errc::io_error));
  REQUIRE(answer->has_value());
  CHECK((*answer)->entries[0].error == ErrorCode::not_coordinator);  // KAFKA_STORAGE_ERROR
  std::vector<FetchedOffset> out;
  f.gc->fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out);
  CHECK(out.at(0).offset == -1);
  f.store.defer = false;
  f.store.fail = true;
  f.store.fail_with = ErrorCode::request_timed_out;
  CHECK((*f.commit_async(standalone_commit(42)))->entries[0].error == ErrorCode::coordinator_not_available);
}

TEST_CASE("the leader's SyncGroup is answered once the assignment is stored") {
  Fixture f;
  std::string id = f.join_member();
  auto j = f.join(f.join_request(id));
  f.advance(1);
  REQUIRE(j->has_value());
  f.store.defer = true;
  auto s = f.sync(id, 1, {{id, {9}}});
  CHECK_FALSE(s->has_value());
  CHECK(f.gc->find("g")->state == GroupState::completing_rebalance);
  f.store.complete_pending();
  REQUIRE(s->has_value());
  CHECK((*s)->error == ErrorCode::none);
  CHECK((*s)->assignment == Bytes{9});
  CHECK(f.gc->find("g")->state == GroupState::stable);
}

TEST_CASE("an assignment stored after the group moved on to another rebalance is not applied") {
  Fixture f;
  std::string a = f.join_member();
  auto ja = f.join(f.join_request(a));
  f.advance(1);
  REQUIRE(ja->has_value());
  f.store.defer = true;
  auto s = f.sync(a, 1, {{a, {9}}});
  // A second member arrives before the store completes: a new rebalance
  // answers the waiting SyncGroup with REBALANCE_IN_PROGRESS.
  std::string b = f.join_member();
  auto jb = f.join(f.join_request(b));
  REQUIRE(s->has_value());
  CHECK((*s)->error == ErrorCode::rebalance_in_progress);
  f.store.complete_pending();
  CHECK(f.gc->find("g")->state == GroupState::preparing_rebalance);
}

TEST_CASE("DeleteGroups answers once the tombstones are stored, the group is gone from then on") {
  Fixture f;
  CHECK(f.commit("", -1) == ErrorCode::none);
  f.store.defer = true;
  std::optional<ErrorCode> answer;
  f.gc->delete_group("g", [&answer](ErrorCode e) { answer = e; });
  CHECK_FALSE(answer.has_value());
  CHECK(f.gc->find("g") != nullptr);
  f.store.complete_pending();
  REQUIRE(answer == ErrorCode::none);
  CHECK(f.gc->find("g") == nullptr);
}

namespace {

// A group id whose __consumer_offsets partition is not `other`'s.
std::string group_on_another_partition(const GroupCoordinator& gc, const std::string& other) {
  for (int i = 0;; ++i) {
    std::string id = "h" + std::to_string(i);
    if (gc.partition_for(id) != gc.partition_for(other)) return id;
  }
}

// A standalone consumer's commit (generation -1) for `group`.
ErrorCode standalone_commit(Fixture& f, const std::string& group, int64_t offset) {
  OffsetCommitRequest r;
  r.group_id = group;
  r.generation = -1;
  r.entries.push_back({"t", 0, offset, -1, std::string("m"), ErrorCode::none});
  auto answer = f.commit_async(std::move(r));
  REQUIRE(answer->has_value());
  return (*answer)->entries[0].error;
}

}  // namespace

TEST_CASE("a single node's coordinator owns every partition") {
  Fixture f;
  for (int32_t p = 0; p < f.config.offsets_partitions; ++p) CHECK(f.gc->owns(p));
}

TEST_CASE("a cluster's coordinator answers NOT_COORDINATOR for every partition it does not own") {
  Fixture f;
  f.gc->coordinate_owned_only();
  const int32_t p = f.gc->partition_for("g");
  CHECK(!f.gc->owns(p));
  CHECK((*f.join(f.join_request("")))->error == ErrorCode::not_coordinator);
  CHECK((*f.sync("m", 1))->error == ErrorCode::not_coordinator);
  CHECK(f.gc->heartbeat("g", "m", std::nullopt, 1) == ErrorCode::not_coordinator);
  CHECK(f.gc->leave("g", {{"m", std::nullopt}}).error == ErrorCode::not_coordinator);
  CHECK(f.commit("", -1) == ErrorCode::not_coordinator);
  std::vector<FetchedOffset> out;
  CHECK(f.gc->fetch_offsets("g", std::nullopt, out) == ErrorCode::not_coordinator);
  CHECK(f.gc->describe("g").error == ErrorCode::not_coordinator);
  CHECK(f.delete_group("g") == ErrorCode::not_coordinator);
  std::vector<ErrorCode> errors;
  CHECK(f.delete_offsets("g", {{"t", 0}}, errors) == ErrorCode::not_coordinator);
  std::vector<GroupListing> listed;
  CHECK(f.gc->list_groups(listed) == ErrorCode::none);
  CHECK(listed.empty());
  // Nothing of the group was written or kept.
  CHECK(f.store.records.empty());
  CHECK(f.gc->find("g") == nullptr);

  // Elected: loading, then served.
  f.gc->own(p);
  f.gc->begin_loading(p);
  CHECK(f.gc->owns(p));
  CHECK((*f.join(f.join_request("")))->error == ErrorCode::coordinator_load_in_progress);
  CHECK(f.gc->list_groups(listed) == ErrorCode::coordinator_load_in_progress);
  f.gc->end_loading(p);
  std::string a = f.stable_single_member();
  CHECK(f.commit(a, 1) == ErrorCode::none);
  // Another partition's group still is not this coordinator's.
  const std::string h = group_on_another_partition(*f.gc, "g");
  CHECK(standalone_commit(f, h, 3) == ErrorCode::not_coordinator);
  CHECK(f.gc->list_groups(listed) == ErrorCode::none);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].group_id == "g");
}

TEST_CASE("resigning a partition unloads its groups and offsets, and its waiting JoinGroups answer NOT_COORDINATOR") {
  Fixture f;
  f.gc->coordinate_owned_only();
  const int32_t p = f.gc->partition_for("g");
  const std::string h = group_on_another_partition(*f.gc, "g");
  const int32_t q = f.gc->partition_for(h);
  f.gc->own(p);
  f.gc->own(q);
  std::string a = f.stable_single_member();
  CHECK(f.commit(a, 1, 42) == ErrorCode::none);
  CHECK(standalone_commit(f, h, 7) == ErrorCode::none);
  // A new member's JoinGroup waits for the rebalance (a has not rejoined).
  std::string c = f.join_member();
  auto waiting = f.join(f.join_request(c));
  REQUIRE(!waiting->has_value());
  REQUIRE(f.timer.has("heartbeat-g-" + a));

  f.gc->unload_partition(p);
  REQUIRE(waiting->has_value());
  CHECK((*waiting)->error == ErrorCode::not_coordinator);
  CHECK(f.gc->find("g") == nullptr);
  CHECK(!f.gc->owns(p));
  // Its timers went with it.
  CHECK(!f.timer.has("heartbeat-g-" + a));
  CHECK(!f.timer.has("join-g"));
  // Its requests now answer NOT_COORDINATOR, its offsets are not served here.
  std::vector<FetchedOffset> out;
  CHECK(f.gc->fetch_offsets("g", std::nullopt, out) == ErrorCode::not_coordinator);
  CHECK(f.gc->heartbeat("g", a, std::nullopt, 1) == ErrorCode::not_coordinator);
  // The other partition's group and offsets stay.
  CHECK(f.gc->owns(q));
  REQUIRE(f.gc->find(h) != nullptr);
  CHECK(f.gc->fetch_offsets(h, std::vector<TopicPartition>{{"t", 0}}, out) == ErrorCode::none);
  CHECK(out.at(0).offset == 7);
  std::vector<GroupListing> listed;
  CHECK(f.gc->list_groups(listed) == ErrorCode::none);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].group_id == h);

  // Elected again: the partition's records bring the group and its offsets back.
  f.gc->own(p);
  f.gc->begin_loading(p);
  for (auto& [part, r] : f.store.records) {
    if (part != p) continue;
    std::optional<ByteView> value;
    if (r.value) value = ByteView(r.value->data(), r.value->size());
    f.gc->replay(part, {r.key.data(), r.key.size()}, value);
  }
  f.gc->end_loading(p);
  out.clear();
  CHECK(f.gc->fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out) == ErrorCode::none);
  CHECK(out.at(0).offset == 42);
}

TEST_CASE("resigning a partition answers its waiting SyncGroups NOT_COORDINATOR, and the group leaves memory") {
  Fixture f;
  f.gc->coordinate_owned_only();
  const int32_t p = f.gc->partition_for("g");
  f.gc->own(p);
  std::string a = f.stable_single_member();
  std::string b = f.join_member();
  auto jb = f.join(f.join_request(b));
  auto ja = f.join(f.join_request(a));
  REQUIRE(ja->has_value());
  REQUIRE(jb->has_value());
  REQUIRE((*jb)->error == ErrorCode::none);
  const int32_t generation = (*jb)->generation;
  // The follower's SyncGroup waits for the leader's assignment.
  auto sb = f.sync(b, generation);
  REQUIRE(!sb->has_value());
  f.gc->unload_partition(p);
  REQUIRE(sb->has_value());
  CHECK((*sb)->error == ErrorCode::not_coordinator);
  CHECK(f.gc->find("g") == nullptr);
}

TEST_CASE("a cluster's coordinator owns nothing once __consumer_offsets is deleted") {
  Fixture f;
  f.gc->coordinate_owned_only();
  const int32_t p = f.gc->partition_for("g");
  f.gc->own(p);
  f.stable_single_member();
  f.gc->unload_all();
  CHECK(!f.gc->owns(p));
  CHECK(f.gc->find("g") == nullptr);
  CHECK((*f.join(f.join_request("")))->error == ErrorCode::not_coordinator);
}

namespace {

OffsetCommitRequest txn_commit(int64_t producer_id, int64_t offset, int32_t partition = 0) {
  OffsetCommitRequest r = standalone_commit(offset);
  r.entries[0].partition = partition;
  r.transaction = TxnProducer{producer_id, 0};
  return r;
}

std::vector<FetchedOffset> fetch(const GroupCoordinator& gc, bool require_stable = false) {
  std::vector<FetchedOffset> out;
  gc.fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out, require_stable);
  return out;
}

}  // namespace

// Kafka's OffsetMetadataManager: a transaction's offsets are held pending,
// apart from the committed ones, until the marker on the offsets partition.
TEST_CASE("TxnOffsetCommit offsets wait for the transaction's marker: COMMIT applies them, ABORT drops them") {
  Fixture f;
  CHECK(f.commit("", -1, 10) == ErrorCode::none);
  auto answer = f.commit_async(txn_commit(7, 20));
  REQUIRE(answer->has_value());
  CHECK((*answer)->entries[0].error == ErrorCode::none);
  REQUIRE(f.store.log.size() == 2);
  CHECK(f.store.log.back().producer_id == 7);

  int32_t p = f.gc->partition_for("g");
  CHECK(fetch(*f.gc).at(0).offset == 10);
  CHECK(fetch(*f.gc).at(0).error == ErrorCode::none);
  // OffsetFetch v7+ with require_stable: the partition is unstable.
  CHECK(fetch(*f.gc, true).at(0).error == ErrorCode::unstable_offset_commit);

  SECTION("COMMIT") {
    f.gc->complete_transaction(p, 7, true);
    CHECK(fetch(*f.gc, true).at(0).offset == 20);
    CHECK(fetch(*f.gc, true).at(0).error == ErrorCode::none);
  }
  SECTION("ABORT") {
    f.gc->complete_transaction(p, 7, false);
    CHECK(fetch(*f.gc, true).at(0).offset == 10);
    CHECK(fetch(*f.gc, true).at(0).error == ErrorCode::none);
  }
  SECTION("another producer's marker leaves them pending") {
    f.gc->complete_transaction(p, 8, true);
    CHECK(fetch(*f.gc, true).at(0).error == ErrorCode::unstable_offset_commit);
  }
}

TEST_CASE("a transaction's offset committed before a later plain commit does not overwrite it") {
  Fixture f;
  REQUIRE((*f.commit_async(txn_commit(7, 20)))->entries[0].error == ErrorCode::none);
  CHECK(f.commit("", -1, 30) == ErrorCode::none);
  f.gc->complete_transaction(f.gc->partition_for("g"), 7, true);
  // The plain commit's record is later in the log: it stands.
  CHECK(fetch(*f.gc).at(0).offset == 30);
}

TEST_CASE("a transaction's offsets whose append fails are not pending") {
  Fixture f;
  f.store.fail = true;
  f.store.fail_with = ErrorCode::not_enough_replicas;
  auto answer = f.commit_async(txn_commit(7, 20));
  REQUIRE(answer->has_value());
  // Kafka's handleOperationException: NOT_ENOUGH_REPLICAS -> COORDINATOR_NOT_AVAILABLE.
  CHECK((*answer)->entries[0].error == ErrorCode::coordinator_not_available);
  CHECK(fetch(*f.gc, true).at(0).error == ErrorCode::none);
}

TEST_CASE("pending transactional offsets and their markers survive a reload") {
  Fixture f;
  int32_t p = f.gc->partition_for("g");
  CHECK(f.commit("", -1, 10) == ErrorCode::none);
  REQUIRE((*f.commit_async(txn_commit(7, 20)))->entries[0].error == ErrorCode::none);
  REQUIRE((*f.commit_async(txn_commit(8, 40)))->entries[0].error == ErrorCode::none);

  auto reload = [&](auto between) {
    MemoryStore store2;
    VirtualTimer timer2;
    auto gc = std::make_unique<GroupCoordinator>(f.config, store2, f.clock, timer2, f.topics);
    gc->begin_loading(p);
    for (size_t i = 0; i < f.store.log.size(); ++i) {
      auto& r = f.store.log[i].record;
      std::optional<ByteView> value;
      if (r.value) value = ByteView(r.value->data(), r.value->size());
      gc->replay(p, {r.key.data(), r.key.size()}, value, static_cast<int64_t>(i), f.store.log[i].producer_id);
    }
    between(*gc);
    gc->end_loading(p);
    return gc;
  };

  SECTION("a COMMIT marker in the log applies producer 7's offset; 8's stays pending") {
    auto gc = reload([&](GroupCoordinator& g) { g.replay_marker(p, 7, true); });
    CHECK(fetch(*gc).at(0).offset == 20);
    CHECK(fetch(*gc, true).at(0).error == ErrorCode::unstable_offset_commit);
    gc->complete_transaction(p, 8, false);
    CHECK(fetch(*gc, true).at(0).offset == 20);
    CHECK(fetch(*gc, true).at(0).error == ErrorCode::none);
  }
  SECTION("a marker written while the partition loads is applied once the load ends") {
    auto gc = reload([&](GroupCoordinator& g) {
      g.complete_transaction(p, 8, true);
      // Records the load reads after the marker was written, as when the
      // loader's read started before the marker's append.
      auto& r = f.store.log.back().record;
      g.replay(p, {r.key.data(), r.key.size()}, ByteView(r.value->data(), r.value->size()), 99, 8);
    });
    CHECK(fetch(*gc).at(0).offset == 40);
    CHECK(fetch(*gc, true).at(0).error == ErrorCode::unstable_offset_commit);  // 7's still open
  }
}

TEST_CASE("an empty group with only pending transactional offsets is kept, and expiry spares the pending partition") {
  Fixture f;
  REQUIRE((*f.commit_async(txn_commit(7, 20)))->entries[0].error == ErrorCode::none);
  f.now += f.config.offsets_retention_ms + 1;
  f.gc->expire_offsets();
  REQUIRE(f.gc->find("g") != nullptr);
  f.gc->complete_transaction(f.gc->partition_for("g"), 7, true);
  CHECK(fetch(*f.gc).at(0).offset == 20);
}

TEST_CASE("DeleteGroups removes a group's pending transactional offsets with it") {
  Fixture f;
  REQUIRE((*f.commit_async(txn_commit(7, 20)))->entries[0].error == ErrorCode::none);
  CHECK(f.delete_group("g") == ErrorCode::none);
  CHECK(f.gc->find("g") == nullptr);
  // The marker after the delete finds nothing to commit.
  f.gc->complete_transaction(f.gc->partition_for("g"), 7, true);
  std::vector<FetchedOffset> out;
  f.gc->fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out);
  CHECK(out.at(0).offset == -1);
}

TEST_CASE("TxnOffsetCommit from a generation the group does not have: ILLEGAL_GENERATION") {
  Fixture f;
  std::string a = f.stable_single_member();
  auto r = txn_commit(7, 20);
  r.member_id = a;
  r.generation = 5;
  auto answer = f.commit_async(r);
  REQUIRE(answer->has_value());
  CHECK((*answer)->entries[0].error == ErrorCode::illegal_generation);
  r.generation = 1;
  CHECK((*f.commit_async(r))->entries[0].error == ErrorCode::none);
}

// ClassicGroup.validateOffsetCommit with isTransactional: kafka-python's
// TxnOffsetCommit v2 names no member or generation, whatever the group does.
TEST_CASE("TxnOffsetCommit without member or generation is accepted by a group with members") {
  Fixture f;
  f.stable_single_member();
  CHECK(f.commit("", -1) == ErrorCode::unknown_member_id);
  auto answer = f.commit_async(txn_commit(7, 20));
  REQUIRE(answer->has_value());
  CHECK((*answer)->entries[0].error == ErrorCode::none);
}

TEST_CASE("TxnOffsetCommit is not held back while the group completes a rebalance") {
  Fixture f;
  std::string a = f.join_member();
  auto j = f.join(f.join_request(a));
  f.advance(1);
  REQUIRE(f.gc->find("g")->state == GroupState::completing_rebalance);
  CHECK(f.commit(a, 1) == ErrorCode::rebalance_in_progress);
  auto r = txn_commit(7, 20);
  r.member_id = a;
  r.generation = 1;
  CHECK((*f.commit_async(r))->entries[0].error == ErrorCode::none);
}

TEST_CASE("a consumer group's commits are checked against member epochs; its id keeps classic members out",
          "[group]") {
  Fixture f;
  auto heartbeat = [&](consumer::ConsumerHeartbeat r) {
    std::optional<consumer::ConsumerHeartbeatResult> out;
    f.gc->consumer_heartbeat(std::move(r), [&](consumer::ConsumerHeartbeatResult res) { out = std::move(res); });
    REQUIRE(out.has_value());
    return *out;
  };
  consumer::ConsumerHeartbeat join;
  join.group_id = "g";
  join.member_id = "m1";
  join.rebalance_timeout_ms = 30000;
  join.subscribed_topic_names = std::vector<std::string>{"t"};
  join.owned = consumer::Assignment{};
  auto joined = heartbeat(join);
  REQUIRE(joined.error == ErrorCode::none);
  REQUIRE(joined.member_epoch == 1);

  CHECK(f.commit("m1", 1, 5, std::nullopt, true) == ErrorCode::none);
  CHECK(f.commit("m1", 0, 5, std::nullopt, true) == ErrorCode::stale_member_epoch);
  CHECK(f.commit("m9", 1, 5, std::nullopt, true) == ErrorCode::unknown_member_id);
  CHECK(f.commit("", -1, 5, std::nullopt, true) == ErrorCode::unknown_member_id);  // not while it has members
  auto v8 = std::make_shared<std::optional<OffsetCommitRequest>>();
  OffsetCommitRequest r8;
  r8.group_id = "g";
  r8.member_id = "m1";
  r8.generation = 1;
  r8.entries.push_back({"t", 0, 6, -1, std::string("m"), ErrorCode::none});
  f.gc->commit_offsets(r8, [v8](OffsetCommitRequest done) { *v8 = std::move(done); }, 8);
  REQUIRE(v8->has_value());
  CHECK((*v8)->entries[0].error == ErrorCode::unsupported_version);
  // TxnOffsetCommit has no STALE_MEMBER_EPOCH.
  OffsetCommitRequest txn = r8;
  txn.generation = 0;
  txn.transaction = TxnProducer{7, 0};
  auto t = f.commit_async(txn);
  REQUIRE(t->has_value());
  CHECK((*t)->entries[0].error == ErrorCode::illegal_generation);

  std::vector<FetchedOffset> out;
  CHECK(f.gc->fetch_offsets("g", std::vector<TopicPartition>{{"t", 0}}, out) == ErrorCode::none);
  CHECK(out.at(0).offset == 5);
  std::vector<GroupListing> listed;
  CHECK(f.gc->list_groups(listed) == ErrorCode::none);
  REQUIRE(listed.size() == 1);  // not also the classic entry holding its offsets
  CHECK(listed[0].type == "consumer");
  CHECK(listed[0].state == "Stable");

  // A classic member may not join it while it has members.
  CHECK((*f.join(f.join_request("")))->error == ErrorCode::inconsistent_group_protocol);
  CHECK(f.delete_group("g") == ErrorCode::non_empty_group);

  // Once empty, a classic group may take the id and commits as classic.
  consumer::ConsumerHeartbeat leave;
  leave.group_id = "g";
  leave.member_id = "m1";
  leave.member_epoch = -1;
  REQUIRE(heartbeat(leave).error == ErrorCode::none);
  std::string a = f.stable_single_member();
  CHECK(f.commit(a, 1) == ErrorCode::none);
}
