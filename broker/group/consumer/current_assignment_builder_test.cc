// The reconciliation steps of KIP-848, as Kafka's CurrentAssignmentBuilder
// takes them: revoke before assign, never two owners of one partition.
#include "broker/group/consumer/current_assignment_builder.h"

#include <catch2/catch.hpp>

#include <map>
#include <utility>

using namespace runnel::broker::group::consumer;
using runnel::protocol::ErrorCode;

namespace {

TopicId topic(uint8_t n) {
  TopicId id;
  id.bytes[15] = n;
  return id;
}

const TopicId foo = topic(1);
const TopicId bar = topic(2);

ConsumerGroupMember member(int32_t epoch, Assignment assigned, MemberState state = MemberState::stable) {
  ConsumerGroupMember m;
  m.member_id = "m1";
  m.member_epoch = epoch;
  m.previous_member_epoch = epoch - 1;
  m.state = state;
  m.assigned_partitions = std::move(assigned);
  return m;
}

// One reconciliation with the partitions other members own now.
struct Scenario {
  int32_t target_epoch = 0;
  Assignment target;
  std::set<TopicId> subscribed{foo, bar};
  std::map<std::pair<TopicId, int32_t>, int32_t> owned_by_others = {};  // partition -> owner's epoch
  std::optional<Assignment> owned;
  bool subscription_changed = false;

  ReconcileResult run(const ConsumerGroupMember& m) const {
    Reconciliation r;
    r.target_epoch = target_epoch;
    r.target = &target;
    r.subscribed = &subscribed;
    r.current_partition_epoch = [this](const TopicId& t, int32_t p) {
      auto it = owned_by_others.find({t, p});
      return it == owned_by_others.end() ? -1 : it->second;
    };
    r.owned = &owned;
    r.subscription_changed = subscription_changed;
    return reconcile(m, r);
  }
};

}  // namespace

TEST_CASE("a stable member at the target epoch stays as it is", "[reconcile]") {
  auto m = member(10, {{foo, {1, 2}}});
  Scenario s{.target_epoch = 10, .target = {{foo, {1, 2}}}, .owned = Assignment{{foo, {1, 2}}}};
  auto r = s.run(m);
  REQUIRE(r.error == ErrorCode::none);
  CHECK(r.member.member_epoch == 10);
  CHECK(r.member.previous_member_epoch == 9);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1, 2}}});
}

TEST_CASE("free partitions of a newer target are assigned at its epoch", "[reconcile]") {
  auto m = member(10, {{foo, {1, 2}}});
  Scenario s{.target_epoch = 11, .target = {{foo, {1, 2, 3}}, {bar, {0}}}, .owned = Assignment{{foo, {1, 2}}}};
  auto r = s.run(m);
  REQUIRE(r.error == ErrorCode::none);
  CHECK(r.member.state == MemberState::stable);
  CHECK(r.member.member_epoch == 11);
  CHECK(r.member.previous_member_epoch == 10);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1, 2, 3}}, {bar, {0}}});
  CHECK(r.member.partitions_pending_revocation.empty());
}

TEST_CASE("partitions leaving the target are revoked first, at the current epoch", "[reconcile]") {
  auto m = member(10, {{foo, {1, 2}}, {bar, {0}}});
  Scenario s{.target_epoch = 11, .target = {{foo, {1, 3}}}, .owned = Assignment{{foo, {1, 2}}, {bar, {0}}}};
  auto r = s.run(m);
  REQUIRE(r.error == ErrorCode::none);
  CHECK(r.member.state == MemberState::unrevoked_partitions);
  CHECK(r.member.member_epoch == 10);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1}}});
  CHECK(r.member.partitions_pending_revocation == Assignment{{foo, {2}}, {bar, {0}}});

  SECTION("it waits while its heartbeat still lists one of them") {
    s.owned = Assignment{{foo, {1}}, {bar, {0}}};
    auto again = s.run(r.member);
    CHECK(again.member.state == MemberState::unrevoked_partitions);
    CHECK(again.member.member_epoch == 10);
    CHECK(again.member.partitions_pending_revocation == Assignment{{foo, {2}}, {bar, {0}}});
  }
  SECTION("a heartbeat without owned partitions proves nothing") {
    s.owned = std::nullopt;
    CHECK(s.run(r.member).member.state == MemberState::unrevoked_partitions);
  }
  SECTION("once revoked it takes the target epoch and the new partition") {
    s.owned = Assignment{{foo, {1}}};
    auto next = s.run(r.member);
    CHECK(next.member.state == MemberState::stable);
    CHECK(next.member.member_epoch == 11);
    CHECK(next.member.assigned_partitions == Assignment{{foo, {1, 3}}});
    CHECK(next.member.partitions_pending_revocation.empty());
  }
}

TEST_CASE("revoked partitions the heartbeat already dropped need no revocation step", "[reconcile]") {
  auto m = member(10, {{foo, {1, 2}}});
  Scenario s{.target_epoch = 11, .target = {{foo, {1}}}, .owned = Assignment{{foo, {1}}}};
  auto r = s.run(m);
  CHECK(r.member.state == MemberState::stable);
  CHECK(r.member.member_epoch == 11);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1}}});
}

TEST_CASE("a partition another member still owns is unreleased until it lets go", "[reconcile]") {
  auto m = member(10, {{foo, {1}}});
  Scenario s{.target_epoch = 11,
             .target = {{foo, {1, 2, 3}}},
             .owned_by_others = {{{foo, 3}, 10}},
             .owned = Assignment{{foo, {1}}}};
  auto r = s.run(m);
  REQUIRE(r.error == ErrorCode::none);
  CHECK(r.member.state == MemberState::unreleased_partitions);
  CHECK(r.member.member_epoch == 11);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1, 2}}});

  SECTION("still owned: nothing changes") {
    auto again = s.run(r.member);
    CHECK(again.member.state == MemberState::unreleased_partitions);
    CHECK(again.member.assigned_partitions == Assignment{{foo, {1, 2}}});
  }
  SECTION("released: assigned, stable") {
    s.owned_by_others.clear();
    s.owned = Assignment{{foo, {1, 2}}};
    auto next = s.run(r.member);
    CHECK(next.member.state == MemberState::stable);
    CHECK(next.member.member_epoch == 11);
    CHECK(next.member.assigned_partitions == Assignment{{foo, {1, 2, 3}}});
  }
}

TEST_CASE("only unreleased partitions: the member takes the epoch and waits", "[reconcile]") {
  auto m = member(10, {{foo, {1}}});
  Scenario s{.target_epoch = 11,
             .target = {{foo, {1, 2}}},
             .owned_by_others = {{{foo, 2}, 10}},
             .owned = Assignment{{foo, {1}}}};
  auto r = s.run(m);
  CHECK(r.member.state == MemberState::unreleased_partitions);
  CHECK(r.member.member_epoch == 11);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1}}});
}

TEST_CASE("its own partition pending revocation, back in the target, is not another's", "[reconcile]") {
  auto m = member(10, {{foo, {1}}}, MemberState::unrevoked_partitions);
  m.partitions_pending_revocation = {{foo, {2}}};
  // The coordinator still counts the member as foo-2's owner.
  Scenario s{.target_epoch = 12,
             .target = {{foo, {1, 2}}},
             .owned_by_others = {{{foo, 2}, 10}},
             .owned = Assignment{{foo, {1}}}};
  auto r = s.run(m);
  CHECK(r.member.state == MemberState::stable);
  CHECK(r.member.member_epoch == 12);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1, 2}}});
}

TEST_CASE("partitions of a topic no longer subscribed are revoked at the same epoch", "[reconcile]") {
  auto m = member(10, {{foo, {1}}, {bar, {0, 1}}});
  Scenario s{.target_epoch = 10,
             .target = {{foo, {1}}, {bar, {0, 1}}},
             .subscribed = {foo},
             .owned = Assignment{{foo, {1}}, {bar, {0, 1}}},
             .subscription_changed = true};
  auto r = s.run(m);
  CHECK(r.member.state == MemberState::unrevoked_partitions);
  CHECK(r.member.member_epoch == 10);
  CHECK(r.member.previous_member_epoch == 10);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1}}});
  CHECK(r.member.partitions_pending_revocation == Assignment{{bar, {0, 1}}});

  SECTION("without a subscription change the same member stays") {
    s.subscription_changed = false;
    CHECK(s.run(m).member.assigned_partitions == Assignment{{foo, {1}}, {bar, {0, 1}}});
  }
  SECTION("already dropped by the client: only the assignment shrinks") {
    s.owned = Assignment{{foo, {1}}};
    auto shrunk = s.run(m);
    CHECK(shrunk.member.state == MemberState::stable);
    CHECK(shrunk.member.assigned_partitions == Assignment{{foo, {1}}});
    CHECK(shrunk.member.partitions_pending_revocation.empty());
  }
}

TEST_CASE("a newer target never assigns a topic the member left", "[reconcile]") {
  auto m = member(10, {{foo, {1}}});
  Scenario s{.target_epoch = 11, .target = {{foo, {1}}, {bar, {0}}}, .subscribed = {foo}, .owned = Assignment{{foo, {1}}}};
  CHECK(s.run(m).member.assigned_partitions == Assignment{{foo, {1}}});
}

TEST_CASE("a member in an unknown state is fenced unless it owns nothing", "[reconcile]") {
  auto m = member(10, {{foo, {1}}}, MemberState::unknown);
  Scenario s{.target_epoch = 11, .target = {{foo, {1, 2}}}, .owned = Assignment{{foo, {1}}}};
  CHECK(s.run(m).error == ErrorCode::fenced_member_epoch);
  s.owned = std::nullopt;
  CHECK(s.run(m).error == ErrorCode::fenced_member_epoch);
  s.owned = Assignment{};
  auto r = s.run(m);
  REQUIRE(r.error == ErrorCode::none);
  CHECK(r.member.state == MemberState::stable);
  CHECK(r.member.member_epoch == 11);
  CHECK(r.member.assigned_partitions == Assignment{{foo, {1, 2}}});
}

TEST_CASE("member states keep Kafka's persisted values", "[reconcile]") {
  CHECK(member_state_from(0) == MemberState::stable);
  CHECK(member_state_from(1) == MemberState::unrevoked_partitions);
  CHECK(member_state_from(2) == MemberState::unreleased_partitions);
  CHECK(member_state_from(3) == MemberState::unknown);
  CHECK(std::string(member_state_name(MemberState::unreleased_partitions)) == "UNRELEASED_PARTITIONS");
}
