// The "uniform" and "range" assignors against the cases of Kafka's
// UniformHomogeneousAssignmentBuilderTest, UniformHeterogeneousAssignmentBuilderTest,
// CommonAssignorTests and RangeAssignorTest (4.1), plus the properties every
// target must have: each subscribed partition assigned once, to a
// subscriber; balance; stickiness on joins and leaves; determinism.
#include "broker/group/consumer/partition_assignor.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "broker/group/consumer/range_assignor.h"
#include "broker/group/consumer/uniform_assignor.h"

using namespace runnel::broker::group::consumer;

namespace {

TopicId topic(uint8_t n) {
  TopicId id;
  id.bytes[15] = n;
  return id;
}

SubscribedTopics metadata(std::initializer_list<std::pair<TopicId, int32_t>> counts) {
  SubscribedTopics topics;
  for (const auto& [id, partitions] : counts) topics[id] = SubscribedTopic{"t" + std::to_string(id.bytes[15]), partitions, {}};
  return topics;
}

MemberSubscription member(std::set<TopicId> subscribed, Assignment target = {}) {
  MemberSubscription m;
  m.subscribed_topic_ids = std::move(subscribed);
  m.target = std::move(target);
  return m;
}

// The group again, each member's previous target replaced by `target`.
GroupSpec with_targets(GroupSpec group, const GroupAssignment& target) {
  for (auto& [id, m] : group.members) {
    auto it = target.find(id);
    m.target = it == target.end() ? Assignment{} : it->second;
  }
  return group;
}

GroupAssignment uniform(const GroupSpec& group, const SubscribedTopics& topics) {
  return UniformAssignor().assign(group, topics);
}

GroupAssignment range(const GroupSpec& group, const SubscribedTopics& topics) {
  return RangeAssignor().assign(group, topics);
}

std::map<std::string, size_t> sizes(const GroupAssignment& a) {
  std::map<std::string, size_t> out;
  for (const auto& [id, assignment] : a) out[id] = partition_count(assignment);
  return out;
}

// Every member is in the answer and nobody else; every partition of a topic
// someone subscribes to goes to exactly one of its subscribers; no topic
// maps to an empty set.
void check_valid(const GroupSpec& group, const SubscribedTopics& topics, const GroupAssignment& result) {
  REQUIRE(result.size() == group.members.size());
  std::map<std::pair<TopicId, int32_t>, std::string> owner;
  for (const auto& [id, assignment] : result) {
    REQUIRE(group.members.contains(id));
    const auto& subscribed = group.members.at(id).subscribed_topic_ids;
    for (const auto& [t, partitions] : assignment) {
      INFO("member " << id << " topic " << int(t.bytes[15]));
      REQUIRE(!partitions.empty());
      REQUIRE(subscribed.contains(t));
      REQUIRE(topics.contains(t));
      for (int32_t p : partitions) {
        REQUIRE(p >= 0);
        REQUIRE(p < topics.at(t).partitions);
        REQUIRE(owner.emplace(std::pair(t, p), id).second);
      }
    }
  }
  for (const auto& [t, meta] : topics) {
    bool subscribed = std::any_of(group.members.begin(), group.members.end(),
                                  [&](const auto& m) { return m.second.subscribed_topic_ids.contains(t); });
    if (!subscribed) continue;
    for (int32_t p = 0; p < meta.partitions; ++p) {
      INFO("topic " << int(t.bytes[15]) << " partition " << p);
      REQUIRE(owner.contains(std::pair(t, p)));
    }
  }
}

// Homogeneous balance: sizes differ by at most one.
void check_balanced(const GroupAssignment& result) {
  auto s = sizes(result);
  auto [lo, hi] = std::minmax_element(s.begin(), s.end(), [](auto& a, auto& b) { return a.second < b.second; });
  REQUIRE(hi->second - lo->second <= 1);
}

// Heterogeneous balance as Kafka's tests check it: no partition could move
// to one of its subscribers that has two fewer than its owner.
void check_no_better_move(const GroupSpec& group, const GroupAssignment& result) {
  auto s = sizes(result);
  for (const auto& [owner, assignment] : result)
    for (const auto& [t, partitions] : assignment)
      for (const auto& [other, m] : group.members)
        if (m.subscribed_topic_ids.contains(t)) {
          INFO(owner << " (" << s[owner] << ") could give topic " << int(t.bytes[15]) << " to " << other << " ("
                     << s[other] << ")");
          REQUIRE(s[other] + 1 >= s[owner]);
        }
}

// The partitions taken from a member that is still in the group.
size_t moved(const GroupAssignment& before, const GroupAssignment& after) {
  std::map<std::pair<TopicId, int32_t>, std::string> was;
  for (const auto& [id, a] : before)
    if (after.contains(id))
      for (const auto& [t, ps] : a)
        for (int32_t p : ps) was[{t, p}] = id;
  size_t n = 0;
  for (const auto& [id, a] : after)
    for (const auto& [t, ps] : a)
      for (int32_t p : ps)
        if (auto it = was.find({t, p}); it != was.end() && it->second != id) ++n;
  return n;
}

bool contains_all(const Assignment& outer, const Assignment& inner) {
  for (const auto& [t, ps] : inner) {
    auto it = outer.find(t);
    if (it == outer.end() || !std::includes(it->second.begin(), it->second.end(), ps.begin(), ps.end())) return false;
  }
  return true;
}

// A group of `members` members over `topic_count` topics of 1..max_partitions
// partitions; each member subscribes to each topic with probability
// `subscribe_percent` (100: homogeneous), and holds a random, possibly stale
// previous target.
struct RandomGroup {
  GroupSpec group;
  SubscribedTopics topics;
};

RandomGroup random_group(std::mt19937& rng, int members, int topic_count, int max_partitions, int subscribe_percent) {
  RandomGroup g;
  for (int t = 1; t <= topic_count; ++t)
    g.topics[topic(static_cast<uint8_t>(t))] =
        SubscribedTopic{"t", std::uniform_int_distribution<int32_t>(0, max_partitions)(rng), {}};
  std::uniform_int_distribution<int> percent(0, 99);
  for (int i = 0; i < members; ++i) {
    MemberSubscription m;
    for (const auto& [id, meta] : g.topics) {
      if (percent(rng) < subscribe_percent) m.subscribed_topic_ids.insert(id);
      // Stale targets, overlapping between members, some beyond the topic.
      for (int32_t p = 0; p <= meta.partitions; ++p)
        if (percent(rng) < 100 / std::max(members, 1)) m.target[id].insert(p);
    }
    g.group.members["member-" + std::to_string(100 + i)] = std::move(m);
  }
  return g;
}

}  // namespace

// ---------------------------------------------------------------------------
// make_assignor

TEST_CASE("make_assignor knows uniform and range by their exact names", "[assignor]") {
  auto uniform_assignor = make_assignor("uniform");
  REQUIRE(uniform_assignor);
  CHECK(uniform_assignor->name() == "uniform");
  auto range_assignor = make_assignor("range");
  REQUIRE(range_assignor);
  CHECK(range_assignor->name() == "range");
  CHECK(make_assignor("") == nullptr);
  CHECK(make_assignor("Uniform") == nullptr);
  CHECK(make_assignor("sticky") == nullptr);
  CHECK(make_assignor("simple") == nullptr);
}

// ---------------------------------------------------------------------------
// uniform, homogeneous subscriptions (UniformHomogeneousAssignmentBuilderTest)
//
// Kafka walks the free partitions topic by topic in its HashSet order of
// topic ids (topic2, topic3, topic1 for its test ids) and a member's previous
// partitions in the order its test built them (topic1 first). Runnel walks
// both in topic-id order, so where a case depends on one of those orders its
// ids are numbered to agree with it, and Kafka's expected target carries
// over unchanged.

TEST_CASE("uniform: a member without subscriptions gets nothing", "[assignor]") {
  GroupSpec g{{{"A", member({})}}};
  auto result = uniform(g, metadata({{topic(1), 3}}));
  CHECK(result == GroupAssignment{{"A", {}}});
}

TEST_CASE("uniform: a topic id missing from the metadata gives nothing (Kafka throws)", "[assignor]") {
  const TopicId known = topic(1), unknown = topic(2);
  GroupSpec alone{{{"A", member({unknown})}}};
  CHECK(uniform(alone, metadata({{known, 3}})) == GroupAssignment{{"A", {}}});

  // Next to a known topic it changes nothing: the group is still homogeneous.
  GroupSpec g{{{"A", member({known, unknown})}, {"B", member({known})}}};
  auto result = uniform(g, metadata({{known, 3}}));
  CHECK(result == GroupAssignment{{"A", {{known, {0}}}}, {"B", {{known, {1, 2}}}}});
}

TEST_CASE("uniform: first assignment, two members, two topics", "[assignor]") {
  const TopicId topic3 = topic(1), topic1 = topic(2);  // Kafka frees topic3 first
  GroupSpec g{{{"A", member({topic1, topic3})}, {"B", member({topic1, topic3})}}};
  auto topics = metadata({{topic1, 3}, {topic3, 2}});
  auto result = uniform(g, topics);
  // 5 partitions: 2 and 3; the last member with room takes the extra one.
  CHECK(result == GroupAssignment{{"A", {{topic3, {0, 1}}}}, {"B", {{topic1, {0, 1, 2}}}}});
  check_valid(g, topics, result);
}

TEST_CASE("uniform: more members than partitions leaves the first member empty", "[assignor]") {
  const TopicId topic3 = topic(3);
  GroupSpec g{{{"A", member({topic3})}, {"B", member({topic3})}, {"C", member({topic3})}}};
  auto topics = metadata({{topic3, 2}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {}}, {"B", {{topic3, {0}}}}, {"C", {{topic3, {1}}}}});
}

TEST_CASE("uniform: 49 members on 100 topics of 3 partitions are balanced", "[assignor]") {
  SubscribedTopics topics;
  std::set<TopicId> all;
  for (int i = 1; i <= 100; ++i) {
    topics[topic(static_cast<uint8_t>(i))] = SubscribedTopic{"t", 3, {}};
    all.insert(topic(static_cast<uint8_t>(i)));
  }
  GroupSpec g;
  for (int i = 1; i < 50; ++i) g.members["member" + std::to_string(i)] = member(all);
  auto result = uniform(g, topics);
  check_valid(g, topics, result);
  check_balanced(result);
}

TEST_CASE("uniform: an unbalanced previous target is evened out, lowest partitions kept", "[assignor]") {
  const TopicId topic1 = topic(1), topic2 = topic(2);  // previous partitions walked topic1 first
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0, 1}}, {topic2, {0, 1}}})},
               {"B", member({topic1, topic2}, {{topic1, {2}}, {topic2, {2}}})}}};
  auto topics = metadata({{topic1, 3}, {topic2, 3}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1}}, {topic2, {0}}}},
                                  {"B", {{topic1, {2}}, {topic2, {1, 2}}}}});
}

TEST_CASE("uniform: partitions added to both topics of two members", "[assignor]") {
  const TopicId topic2 = topic(1), topic1 = topic(2);  // Kafka frees topic2 first
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0, 2}}, {topic2, {0}}})},
               {"B", member({topic1, topic2}, {{topic1, {1}}, {topic2, {1, 2}}})}}};
  auto topics = metadata({{topic1, 6}, {topic2, 5}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 2}}, {topic2, {0, 3, 4}}}},
                                  {"B", {{topic1, {1, 3, 4, 5}}, {topic2, {1, 2}}}}});
  check_valid(g, topics, result);
  check_balanced(result);
}

TEST_CASE("uniform: a third member joins two members on two topics", "[assignor]") {
  const TopicId topic1 = topic(1), topic2 = topic(2);  // previous partitions walked topic1 first
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0, 2}}, {topic2, {0}}})},
               {"B", member({topic1, topic2}, {{topic1, {1}}, {topic2, {1, 2}}})},
               {"C", member({topic1, topic2})}}};
  auto topics = metadata({{topic1, 3}, {topic2, 3}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 2}}}},
                                  {"B", {{topic1, {1}}, {topic2, {1}}}},
                                  {"C", {{topic2, {0, 2}}}}});
}

TEST_CASE("uniform: the third member leaves, its partitions go to the two left", "[assignor]") {
  const TopicId topic2 = topic(1), topic1 = topic(2);  // Kafka frees topic2 first
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0}}, {topic2, {0}}})},
               {"B", member({topic1, topic2}, {{topic1, {1}}, {topic2, {1}}})}}};
  auto topics = metadata({{topic1, 3}, {topic2, 3}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0}}, {topic2, {0, 2}}}},
                                  {"B", {{topic1, {1, 2}}, {topic2, {1}}}}});
}

TEST_CASE("uniform: a topic no longer subscribed is taken away", "[assignor]") {
  const TopicId topic1 = topic(1), topic2 = topic(2);
  GroupSpec g{{{"A", member({topic2}, {{topic1, {0}}, {topic2, {0}}})},
               {"B", member({topic2}, {{topic1, {1}}, {topic2, {1}}})}}};
  auto result = uniform(g, metadata({{topic1, 2}, {topic2, 2}}));
  CHECK(result == GroupAssignment{{"A", {{topic2, {0}}}}, {"B", {{topic2, {1}}}}});
}

TEST_CASE("uniform: a balanced target stays as it is, wherever the extra partitions sit", "[assignor]") {
  // KAFKA-18688 (4.1): before it, the first members in iteration order had
  // to hold the extra partitions, so this target moved a partition C -> A.
  const TopicId t = topic(1);
  GroupSpec g{{{"A", member({t}, {{t, {0, 1}}})},
               {"B", member({t}, {{t, {2, 3}}})},
               {"C", member({t}, {{t, {4, 5, 6}}})}}};
  auto topics = metadata({{t, 7}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{t, {0, 1}}}}, {"B", {{t, {2, 3}}}}, {"C", {{t, {4, 5, 6}}}}});

  // Same on three topics, extras held by the last two of four members.
  const TopicId t1 = topic(1), t2 = topic(2), t3 = topic(3);
  GroupSpec g2{{{"A", member({t1, t2, t3}, {{t1, {0, 1}}})},
                {"B", member({t1, t2, t3}, {{t1, {2}}, {t2, {0}}})},
                {"C", member({t1, t2, t3}, {{t2, {1, 2}}, {t3, {0}}})},
                {"D", member({t1, t2, t3}, {{t3, {1, 2, 3}}})}}};
  auto topics2 = metadata({{t1, 3}, {t2, 3}, {t3, 4}});
  GroupAssignment previous;
  for (const auto& [id, m] : g2.members) previous[id] = m.target;
  CHECK(uniform(g2, topics2) == previous);
}

TEST_CASE("uniform: a member joining a balanced group of three takes only what it must", "[assignor]") {
  const TopicId t1 = topic(1), t2 = topic(2);
  auto topics = metadata({{t1, 5}, {t2, 4}});
  GroupSpec g{{{"A", member({t1, t2})}, {"B", member({t1, t2})}, {"C", member({t1, t2})}}};
  auto before = uniform(g, topics);
  check_balanced(before);
  REQUIRE(sizes(before) == std::map<std::string, size_t>{{"A", 3}, {"B", 3}, {"C", 3}});

  GroupSpec joined = with_targets(g, before);
  joined.members["D"] = member({t1, t2});
  auto after = uniform(joined, topics);
  check_valid(joined, topics, after);
  check_balanced(after);
  // 9 partitions over 4 members: D needs 2, so exactly 2 move, both to D.
  CHECK(partition_count(after.at("D")) == 2);
  CHECK(moved(before, after) == 2);
  for (const char* id : {"A", "B", "C"}) CHECK(contains_all(before.at(id), after.at(id)));
}

TEST_CASE("uniform: a member leaving spreads its partitions, nobody else's move", "[assignor]") {
  const TopicId t1 = topic(1), t2 = topic(2);
  auto topics = metadata({{t1, 6}, {t2, 4}});
  GroupSpec g{{{"A", member({t1, t2})}, {"B", member({t1, t2})}, {"C", member({t1, t2})}, {"D", member({t1, t2})}}};
  auto before = uniform(g, topics);
  check_balanced(before);

  for (const char* leaving : {"A", "B", "C", "D"}) {
    INFO(leaving << " leaves");
    GroupSpec left = with_targets(g, before);
    left.members.erase(leaving);
    auto after = uniform(left, topics);
    check_valid(left, topics, after);
    check_balanced(after);
    for (const auto& [id, a] : after) CHECK(contains_all(a, before.at(id)));
    CHECK(moved(before, after) == 0);
  }
}

TEST_CASE("uniform: zero members, zero partitions", "[assignor]") {
  const TopicId t = topic(1);
  CHECK(uniform(GroupSpec{}, metadata({{t, 3}})).empty());

  GroupSpec g{{{"A", member({t})}, {"B", member({t})}}};
  CHECK(uniform(g, metadata({{t, 0}})) == GroupAssignment{{"A", {}}, {"B", {}}});
  CHECK(uniform(g, SubscribedTopics{}) == GroupAssignment{{"A", {}}, {"B", {}}});
}

TEST_CASE("uniform: a previous target with impossible partitions is cleaned, not trusted", "[assignor]") {
  // Partitions beyond the topic, and one partition under two members: the
  // first member keeps it, the other treats it as never held.
  const TopicId t = topic(1);
  GroupSpec g{{{"A", member({t}, {{t, {0, 1, 9}}})}, {"B", member({t}, {{t, {1, 2, -1}}})}}};
  auto topics = metadata({{t, 4}});
  auto result = uniform(g, topics);
  check_valid(g, topics, result);
  CHECK(result == GroupAssignment{{"A", {{t, {0, 1}}}}, {"B", {{t, {2, 3}}}}});

  // The same through the heterogeneous builder.
  auto general = UniformAssignor::assign_heterogeneous(g, topics);
  check_valid(g, topics, general);
  CHECK(general == GroupAssignment{{"A", {{t, {0, 1}}}}, {"B", {{t, {2, 3}}}}});
}

// ---------------------------------------------------------------------------
// uniform, heterogeneous subscriptions (UniformHeterogeneousAssignmentBuilderTest)
//
// Kafka's heterogeneous builder orders topics by id on ties and its tests
// list members in id order, as Runnel does: its expected targets carry over
// with topic1 < topic2 < topic3 < topic4.

namespace {
const TopicId topic1 = topic(1), topic2 = topic(2), topic3 = topic(3), topic4 = topic(4);
}

TEST_CASE("uniform/heterogeneous: two members without subscriptions get nothing", "[assignor]") {
  GroupSpec g{{{"A", member({})}, {"B", member({})}}};
  auto topics = metadata({{topic1, 3}});
  CHECK(UniformAssignor::assign_heterogeneous(g, topics) == GroupAssignment{{"A", {}}, {"B", {}}});
}

TEST_CASE("uniform/heterogeneous: members subscribed to missing topics get nothing (Kafka throws)", "[assignor]") {
  GroupSpec g{{{"A", member({topic3})}, {"B", member({topic2})}}};
  auto topics = metadata({{topic1, 3}});
  CHECK(uniform(g, topics) == GroupAssignment{{"A", {}}, {"B", {}}});
  CHECK(UniformAssignor::assign_heterogeneous(g, topics) == GroupAssignment{{"A", {}}, {"B", {}}});
}

TEST_CASE("uniform/heterogeneous: first assignment, two members, two topics", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic3})}, {"B", member({topic3})}}};
  auto topics = metadata({{topic1, 3}, {topic3, 6}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1, 2}}, {topic3, {4}}}},
                                  {"B", {{topic3, {0, 1, 2, 3, 5}}}}});
  check_valid(g, topics, result);
}

TEST_CASE("uniform/heterogeneous: more members than partitions", "[assignor]") {
  GroupSpec g{{{"A", member({topic3})}, {"B", member({topic3})}, {"C", member({topic1})}}};
  auto topics = metadata({{topic3, 1}, {topic1, 2}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic3, {0}}}}, {"B", {}}, {"C", {{topic1, {0, 1}}}}});
}

TEST_CASE("uniform/heterogeneous: unbalanced previous target over three topics", "[assignor]") {
  GroupSpec g{{{"A", member({topic1}, {{topic1, {0, 1, 2}}})},
               {"B", member({topic1, topic2}, {{topic1, {3}}, {topic2, {0}}})},
               {"C", member({topic1, topic2, topic3},
                            {{topic1, {4, 5}}, {topic2, {1, 2, 3}}, {topic3, {0, 1, 2, 3}}})}}};
  auto topics = metadata({{topic1, 6}, {topic2, 4}, {topic3, 4}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1, 2, 5}}}},
                                  {"B", {{topic1, {3}}, {topic2, {0, 1, 2, 3}}}},
                                  {"C", {{topic1, {4}}, {topic3, {0, 1, 2, 3}}}}});
  check_valid(g, topics, result);
  check_no_better_move(g, result);
}

TEST_CASE("uniform/heterogeneous: partitions added to four topics of two members", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic3}, {{topic1, {0, 1, 2, 3}}, {topic3, {0, 1}}})},
               {"B", member({topic1, topic2, topic3, topic4}, {{topic2, {0, 1, 2}}, {topic4, {0, 1, 2}}})}}};
  auto topics = metadata({{topic1, 6}, {topic2, 5}, {topic3, 3}, {topic4, 3}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1, 2, 3, 4, 5}}, {topic3, {0, 1, 2}}}},
                                  {"B", {{topic2, {0, 1, 2, 3, 4}}, {topic4, {0, 1, 2}}}}});
}

TEST_CASE("uniform/heterogeneous: a member and partitions added", "[assignor]") {
  GroupSpec g{{{"A", member({topic1}, {{topic1, {0, 2}}, {topic2, {0}}})},
               {"B", member({topic1, topic2}, {{topic1, {1}}, {topic2, {1, 2}}})},
               {"C", member({topic1, topic2})}}};
  auto topics = metadata({{topic1, 6}, {topic2, 7}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 2, 3, 4, 5}}}},
                                  {"B", {{topic1, {1}}, {topic2, {1, 2, 6}}}},
                                  {"C", {{topic2, {0, 3, 4, 5}}}}});
  check_valid(g, topics, result);
}

TEST_CASE("uniform/heterogeneous: the third of three members leaves", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic3}, {{topic1, {0, 1, 2}}, {topic3, {0, 1}}})},
               {"B", member({topic2}, {{topic2, {3, 4, 5, 6}}})}}};
  auto topics = metadata({{topic1, 3}, {topic2, 8}, {topic3, 3}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1, 2}}, {topic3, {0, 1, 2}}}},
                                  {"B", {{topic2, {0, 1, 2, 3, 4, 5, 6, 7}}}}});
}

TEST_CASE("uniform/heterogeneous: a subscription removed", "[assignor]") {
  GroupSpec g{{{"A", member({topic1}, {{topic1, {0, 2}}, {topic2, {1, 3}}})},
               {"B", member({topic1, topic2}, {{topic1, {1}}, {topic2, {0, 2, 4}}})}}};
  auto topics = metadata({{topic1, 3}, {topic2, 5}});
  auto result = uniform(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1, 2}}}}, {"B", {{topic2, {0, 1, 2, 3, 4}}}}});
}

TEST_CASE("uniform/heterogeneous: balancing stops when a topic's partitions run out", "[assignor]") {
  // Homogeneous subscriptions, forced through the heterogeneous builder as
  // Kafka's test does: B starts with none of any topic.
  GroupSpec g{{{"A", member({topic1, topic2, topic3}, {{topic1, {0, 1}}, {topic2, {0, 1}}, {topic3, {0, 1}}})},
               {"B", member({topic1, topic2, topic3})}}};
  auto topics = metadata({{topic1, 2}, {topic2, 2}, {topic3, 2}});
  auto result = UniformAssignor::assign_heterogeneous(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic2, {0}}, {topic3, {0, 1}}}},
                                  {"B", {{topic1, {0, 1}}, {topic2, {1}}}}});

  // The assignor itself takes the homogeneous builder here: B gets the
  // partitions A holds beyond its quota of 3, highest topic first.
  CHECK(uniform(g, topics) == GroupAssignment{{"A", {{topic1, {0, 1}}, {topic2, {0}}}},
                                              {"B", {{topic2, {1}}, {topic3, {0, 1}}}}});
}

TEST_CASE("uniform/heterogeneous: one member without subscriptions", "[assignor]") {
  GroupSpec g{{{"A", member({topic1})}, {"B", member({})}}};
  auto result = uniform(g, metadata({{topic1, 3}}));
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1, 2}}}}, {"B", {}}});
}

// The heterogeneous builder is less sticky than the homogeneous one: it
// hands out the free partitions before it balances, so a join or a leave
// can move partitions between members that stay. These targets follow
// Kafka's steps by hand.

TEST_CASE("uniform/heterogeneous: a member leaving", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic2})},
               {"B", member({topic1, topic2})},
               {"C", member({topic1})},
               {"D", member({topic2, topic3})}}};
  auto topics = metadata({{topic1, 7}, {topic2, 5}, {topic3, 3}});
  auto before = uniform(g, topics);
  check_valid(g, topics, before);
  check_no_better_move(g, before);
  REQUIRE(before == GroupAssignment{{"A", {{topic1, {0, 3, 6}}, {topic2, {2}}}},
                                    {"B", {{topic1, {1}}, {topic2, {0, 1, 4}}}},
                                    {"C", {{topic1, {2, 4, 5}}}},
                                    {"D", {{topic2, {3}}, {topic3, {0, 1, 2}}}}});

  // B's topic1 partition goes to C, its topic2 ones to A (two) and D; then
  // balancing topic1 moves A's highest, 6, to C.
  GroupSpec left = with_targets(g, before);
  left.members.erase("B");
  auto after = uniform(left, topics);
  check_valid(left, topics, after);
  check_no_better_move(left, after);
  CHECK(after == GroupAssignment{{"A", {{topic1, {0, 3}}, {topic2, {0, 2, 4}}}},
                                 {"C", {{topic1, {1, 2, 4, 5, 6}}}},
                                 {"D", {{topic2, {1, 3}}, {topic3, {0, 1, 2}}}}});
  CHECK(moved(before, after) == 1);

  // D leaves: topic3 loses its last subscriber; D's topic2 partition goes
  // to A, which then hands topic1's 6 to C.
  left = with_targets(g, before);
  left.members.erase("D");
  after = uniform(left, topics);
  check_valid(left, topics, after);
  check_no_better_move(left, after);
  CHECK(after == GroupAssignment{{"A", {{topic1, {0, 3}}, {topic2, {2, 3}}}},
                                 {"B", {{topic1, {1}}, {topic2, {0, 1, 4}}}},
                                 {"C", {{topic1, {2, 4, 5, 6}}}}});
  CHECK(moved(before, after) == 1);
}

TEST_CASE("uniform/heterogeneous: a member joining", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic2})}, {"B", member({topic1})}, {"C", member({topic2})}}};
  auto topics = metadata({{topic1, 6}, {topic2, 6}});
  auto before = uniform(g, topics);
  check_no_better_move(g, before);
  // 4/4/4 exists, but needs a chain of moves (topic1 A -> B, topic2 C -> A);
  // Kafka balances topic by topic and stops at 4/3/5.
  REQUIRE(before == GroupAssignment{{"A", {{topic1, {0, 2, 4}}, {topic2, {4}}}},
                                    {"B", {{topic1, {1, 3, 5}}}},
                                    {"C", {{topic2, {0, 1, 2, 3, 5}}}}});

  GroupSpec joined = with_targets(g, before);
  joined.members["D"] = member({topic1, topic2});
  auto after = uniform(joined, topics);
  check_valid(joined, topics, after);
  check_no_better_move(joined, after);
  CHECK(after == GroupAssignment{{"A", {{topic1, {0}}, {topic2, {4, 5}}}},
                                 {"B", {{topic1, {1, 3, 5}}}},
                                 {"C", {{topic2, {0, 1, 2}}}},
                                 {"D", {{topic1, {2, 4}}, {topic2, {3}}}}});
  CHECK(moved(before, after) == 4);  // three to D, and C's 5 to A
}

// ---------------------------------------------------------------------------
// uniform, properties (CommonAssignorTests)

TEST_CASE("uniform: the same input gives the same target, and a target is its own next", "[assignor]") {
  // Kafka's testAssignmentReuse: run again on its own output, nothing moves.
  for (int subscribe_percent : {100, 60}) {
    INFO("subscribe " << subscribe_percent << "%");
    GroupSpec g{{{"A", member({topic1, topic2, topic3})},
                 {"B", member({topic1, topic2, topic3})},
                 {"C", member({topic1, topic2, topic3})}}};
    if (subscribe_percent != 100) g.members["C"].subscribed_topic_ids.erase(topic1);
    auto topics = metadata({{topic1, 2}, {topic2, 5}, {topic3, 7}});
    auto first = uniform(g, topics);
    CHECK(uniform(g, topics) == first);
    CHECK(uniform(with_targets(g, first), topics) == first);
  }
}

TEST_CASE("uniform: random groups get valid, balanced, stable targets", "[assignor]") {
  std::mt19937 rng(848);
  for (int round = 0; round < 300; ++round) {
    const bool homogeneous = round % 2 == 0;
    const int members = std::uniform_int_distribution<int>(1, 12)(rng);
    auto [g, topics] = random_group(rng, members, std::uniform_int_distribution<int>(1, 6)(rng), 12,
                                    homogeneous ? 100 : 60);
    INFO("round " << round);
    auto result = uniform(g, topics);
    check_valid(g, topics, result);
    if (homogeneous) check_balanced(result);
    check_no_better_move(g, result);
    CHECK(uniform(g, topics) == result);
    CHECK(uniform(with_targets(g, result), topics) == result);
  }
}

// ---------------------------------------------------------------------------
// range (RangeAssignorTest)

TEST_CASE("range: a member without subscriptions gets nothing", "[assignor]") {
  GroupSpec g{{{"A", member({})}}};
  CHECK(range(g, metadata({{topic1, 3}})) == GroupAssignment{{"A", {}}});
}

TEST_CASE("range: a topic id missing from the metadata gives nothing (Kafka throws)", "[assignor]") {
  GroupSpec g{{{"A", member({topic2})}, {"B", member({topic1, topic2})}}};
  CHECK(range(g, metadata({{topic1, 3}})) == GroupAssignment{{"A", {}}, {"B", {{topic1, {0, 1, 2}}}}});
}

TEST_CASE("range: first assignment, two members, same subscriptions", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic3})}, {"B", member({topic1, topic3})}}};
  auto topics = metadata({{topic1, 3}, {topic3, 2}});
  CHECK(range(g, topics) == GroupAssignment{{"A", {{topic1, {0, 1}}, {topic3, {0}}}},
                                            {"B", {{topic1, {2}}, {topic3, {1}}}}});
}

TEST_CASE("range: first assignment, three members, different subscriptions", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic2})}, {"B", member({topic3})}, {"C", member({topic2, topic3})}}};
  auto topics = metadata({{topic1, 3}, {topic2, 3}, {topic3, 2}});
  auto result = range(g, topics);
  CHECK(result == GroupAssignment{{"A", {{topic1, {0, 1, 2}}, {topic2, {0, 1}}}},
                                  {"B", {{topic3, {0}}}},
                                  {"C", {{topic2, {2}}, {topic3, {1}}}}});
  check_valid(g, topics, result);
}

TEST_CASE("range: more members than partitions", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic3})}, {"B", member({topic1, topic3})}, {"C", member({topic1, topic3})}}};
  auto topics = metadata({{topic1, 3}, {topic3, 2}});
  CHECK(range(g, topics) == GroupAssignment{{"A", {{topic1, {0}}, {topic3, {0}}}},
                                            {"B", {{topic1, {1}}, {topic3, {1}}}},
                                            {"C", {{topic1, {2}}}}});
}

TEST_CASE("range: a member joining when members outnumber partitions gets nothing", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0}}, {topic2, {0}}})},
               {"B", member({topic1, topic2}, {{topic1, {1}}, {topic2, {1}}})},
               {"C", member({topic1, topic2})}}};
  CHECK(range(g, metadata({{topic1, 2}, {topic2, 2}})) ==
        GroupAssignment{{"A", {{topic1, {0}}, {topic2, {0}}}}, {"B", {{topic1, {1}}, {topic2, {1}}}}, {"C", {}}});
}

TEST_CASE("range: a partition added to each of two topics", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0, 1}}, {topic2, {0, 1}}})},
               {"B", member({topic1, topic2}, {{topic1, {2}}, {topic2, {2}}})}}};
  CHECK(range(g, metadata({{topic1, 4}, {topic2, 4}})) ==
        GroupAssignment{{"A", {{topic1, {0, 1}}, {topic2, {0, 1}}}}, {"B", {{topic1, {2, 3}}, {topic2, {2, 3}}}}});
}

TEST_CASE("range: a member joining re-cuts the ranges (4.1's range is not sticky)", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0, 1}}, {topic2, {0, 1}}})},
               {"B", member({topic1, topic2}, {{topic1, {2}}, {topic2, {2}}})},
               {"C", member({topic1, topic2})}}};
  CHECK(range(g, metadata({{topic1, 3}, {topic2, 3}})) ==
        GroupAssignment{{"A", {{topic1, {0}}, {topic2, {0}}}},
                        {"B", {{topic1, {1}}, {topic2, {1}}}},
                        {"C", {{topic1, {2}}, {topic2, {2}}}}});
}

TEST_CASE("range: a member joining on one topic, and a partition added", "[assignor]") {
  GroupSpec g{{{"A", member({topic1, topic2}, {{topic1, {0, 1}}, {topic2, {0, 1}}})},
               {"B", member({topic1, topic2}, {{topic1, {2}}, {topic2, {2}}})},
               {"C", member({topic1})}}};
  CHECK(range(g, metadata({{topic1, 4}, {topic2, 3}})) ==
        GroupAssignment{{"A", {{topic1, {0, 1}}, {topic2, {0, 1}}}},
                        {"B", {{topic1, {2}}, {topic2, {2}}}},
                        {"C", {{topic1, {3}}}}});
}

TEST_CASE("range: the member left takes everything", "[assignor]") {
  GroupSpec g{{{"B", member({topic1, topic2}, {{topic1, {2}}, {topic2, {2}}})}}};
  CHECK(range(g, metadata({{topic1, 3}, {topic2, 3}})) ==
        GroupAssignment{{"B", {{topic1, {0, 1, 2}}, {topic2, {0, 1, 2}}}}});
}

TEST_CASE("range: several subscriptions changed", "[assignor]") {
  GroupSpec g{{{"A", member({topic1}, {{topic1, {0, 1, 2}}, {topic2, {0}}})},
               {"B", member({topic1, topic2, topic3}, {{topic2, {1}}})},
               {"C", member({topic2}, {{topic2, {2}}, {topic3, {0, 1}}})}}};
  CHECK(range(g, metadata({{topic1, 3}, {topic2, 3}, {topic3, 2}})) ==
        GroupAssignment{{"A", {{topic1, {0, 1}}}},
                        {"B", {{topic1, {2}}, {topic2, {0, 1}}, {topic3, {0, 1}}}},
                        {"C", {{topic2, {2}}}}});
}

TEST_CASE("range: zero members, zero partitions", "[assignor]") {
  CHECK(range(GroupSpec{}, metadata({{topic1, 3}})).empty());
  GroupSpec g{{{"A", member({topic1})}, {"B", member({topic1})}}};
  CHECK(range(g, metadata({{topic1, 0}})) == GroupAssignment{{"A", {}}, {"B", {}}});
}

TEST_CASE("range: each topic in contiguous ranges, in member-id order, longer ranges first", "[assignor]") {
  std::mt19937 rng(881);
  for (int round = 0; round < 300; ++round) {
    INFO("round " << round);
    const int members = std::uniform_int_distribution<int>(1, 9)(rng);
    auto [g, topics] = random_group(rng, members, std::uniform_int_distribution<int>(1, 5)(rng), 20, 70);
    auto result = range(g, topics);
    check_valid(g, topics, result);
    CHECK(range(g, topics) == result);
    for (const auto& [t, meta] : topics) {
      std::vector<std::string> subscribers;  // member-id order
      for (const auto& [id, m] : g.members)
        if (m.subscribed_topic_ids.contains(t)) subscribers.push_back(id);
      if (subscribers.empty()) continue;
      const size_t quota = static_cast<size_t>(meta.partitions) / subscribers.size();
      const size_t longer = static_cast<size_t>(meta.partitions) % subscribers.size();
      int32_t next = 0;
      for (size_t i = 0; i < subscribers.size(); ++i) {
        const Assignment& a = result.at(subscribers[i]);
        auto it = a.find(t);
        const size_t length = it == a.end() ? 0 : it->second.size();
        CHECK(length == quota + (i < longer ? 1 : 0));
        if (length > 0) {
          CHECK(*it->second.begin() == next);
          CHECK(*it->second.rbegin() == next + static_cast<int32_t>(length) - 1);
        }
        next += static_cast<int32_t>(length);
      }
      CHECK(next == meta.partitions);
    }
  }
}

TEST_CASE("range: co-partitioned topics give each member the same partition numbers", "[assignor]") {
  GroupSpec g{{{"m1", member({topic1, topic2, topic3})},
               {"m2", member({topic1, topic2, topic3})},
               {"m3", member({topic1, topic2, topic3})}}};
  auto result = range(g, metadata({{topic1, 8}, {topic2, 8}, {topic3, 8}}));
  for (const auto& [id, a] : result) {
    CHECK(a.at(topic1) == a.at(topic2));
    CHECK(a.at(topic2) == a.at(topic3));
  }
  CHECK(result.at("m1").at(topic1) == Partitions{0, 1, 2});
  CHECK(result.at("m2").at(topic1) == Partitions{3, 4, 5});
  CHECK(result.at("m3").at(topic1) == Partitions{6, 7});
}

TEST_CASE("range: static members first, by instance id, then the others by member id", "[assignor]") {
  auto with_instance = [](MemberSubscription m, std::string instance) {
    m.instance_id = std::move(instance);
    return m;
  };
  GroupSpec g{{{"A", member({topic1})},
               {"B", with_instance(member({topic1}), "z")},
               {"C", with_instance(member({topic1}), "y")},
               {"D", member({topic1})}}};
  // A static member keeps its place across a new member id: its range
  // follows its instance id.
  CHECK(range(g, metadata({{topic1, 4}})) ==
        GroupAssignment{{"C", {{topic1, {0}}}}, {"B", {{topic1, {1}}}}, {"A", {{topic1, {2}}}}, {"D", {{topic1, {3}}}}});
}
