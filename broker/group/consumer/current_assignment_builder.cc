#include "broker/group/consumer/current_assignment_builder.h"

#include <algorithm>

namespace runnel::broker::group::consumer {

namespace {

using protocol::ErrorCode;

// Kafka's Builder.updateMemberEpoch: the epoch it had becomes the previous
// one, even when unchanged (a heartbeat at the previous epoch whose owned
// partitions are within the assignment is a lost response, not a zombie).
void update_member_epoch(ConsumerGroupMember& m, int32_t epoch) {
  m.previous_member_epoch = m.member_epoch;
  m.member_epoch = epoch;
}

bool contains(const Assignment& a, const TopicId& topic, int32_t partition) {
  auto it = a.find(topic);
  return it != a.end() && it->second.contains(partition);
}

class Step {
 public:
  Step(const ConsumerGroupMember& member, const Reconciliation& r) : member_(member), r_(r) {}

  ReconcileResult build() const {
    switch (member_.state) {
      case MemberState::stable:
        // A newer target: move towards it. Otherwise only a changed
        // subscription can take partitions away.
        if (member_.member_epoch != r_.target_epoch) return next_assignment(member_.member_epoch);
        if (r_.subscription_changed) return drop_unsubscribed();
        return {ErrorCode::none, member_};
      case MemberState::unrevoked_partitions:
        // It goes on once its heartbeat no longer lists any partition it
        // was asked to revoke.
        if (owns_any(member_.partitions_pending_revocation)) {
          if (r_.subscription_changed) return drop_unsubscribed();
          return {ErrorCode::none, member_};
        }
        return next_assignment(member_.member_epoch);
      case MemberState::unreleased_partitions:
        // Takes whatever of its target the previous owners have released.
        return next_assignment(member_.member_epoch);
      case MemberState::unknown:
        break;
    }
    // A state written by a newer coordinator: start over from nothing.
    if (!r_.owned->has_value() || partition_count(**r_.owned) != 0) return {ErrorCode::fenced_member_epoch, member_};
    return next_assignment(r_.target_epoch);
  }

 private:
  // Whether the heartbeat's owned partitions include any of `revoking`; a
  // heartbeat that did not list them is taken to own everything.
  bool owns_any(const Assignment& revoking) const {
    if (!r_.owned->has_value()) return true;
    for (const auto& [topic, partitions] : **r_.owned)
      for (int32_t p : partitions)
        if (contains(revoking, topic, p)) return true;
    return false;
  }

  // At the same epoch: partitions of topics no longer subscribed move to
  // pending revocation (Kafka's updateCurrentAssignment).
  ReconcileResult drop_unsubscribed() const {
    ConsumerGroupMember m = member_;
    bool removed = false;
    for (auto it = m.assigned_partitions.begin(); it != m.assigned_partitions.end();) {
      if (r_.subscribed->contains(it->first)) {
        ++it;
        continue;
      }
      m.partitions_pending_revocation[it->first].insert(it->second.begin(), it->second.end());
      it = m.assigned_partitions.erase(it);
      removed = true;
    }
    if (!removed) return {ErrorCode::none, member_};
    if (owns_any(m.partitions_pending_revocation)) {
      m.state = MemberState::unrevoked_partitions;
    } else {
      // Already let go of: only the assignment shrinks.
      m.partitions_pending_revocation = member_.partitions_pending_revocation;
    }
    update_member_epoch(m, member_.member_epoch);
    return {ErrorCode::none, std::move(m)};
  }

  // Kafka's computeNextAssignment, topic by topic:
  //   kept    = assigned ∩ target
  //   revoke  = assigned − kept
  //   assign  = target − kept − partitions another member still owns
  ReconcileResult next_assignment(int32_t epoch) const {
    static const Partitions none;
    std::set<TopicId> topics;
    for (const auto& [t, ps] : *r_.target) topics.insert(t);
    for (const auto& [t, ps] : member_.assigned_partitions) topics.insert(t);

    Assignment kept, revoke, assign;
    bool unreleased = false;
    for (const TopicId& topic : topics) {
      auto tit = r_.target->find(topic);
      const Partitions& target = (tit == r_.target->end() || !r_.subscribed->contains(topic)) ? none : tit->second;
      auto ait = member_.assigned_partitions.find(topic);
      const Partitions& current = ait == member_.assigned_partitions.end() ? none : ait->second;
      Partitions k, rv, as;
      for (int32_t p : current) (target.contains(p) ? k : rv).insert(p);
      for (int32_t p : target) {
        if (k.contains(p)) continue;
        // Its own partition pending revocation is not another's: only one
        // member owns a partition at a time.
        if (r_.current_partition_epoch(topic, p) != -1 &&
            !contains(member_.partitions_pending_revocation, topic, p)) {
          unreleased = true;
          continue;
        }
        as.insert(p);
      }
      if (!k.empty()) kept[topic] = std::move(k);
      if (!rv.empty()) revoke[topic] = std::move(rv);
      if (!as.empty()) assign[topic] = std::move(as);
    }

    ConsumerGroupMember m = member_;
    if (!revoke.empty() && owns_any(revoke)) {
      // Revoke first, at the current epoch.
      m.state = MemberState::unrevoked_partitions;
      update_member_epoch(m, epoch);
      m.assigned_partitions = std::move(kept);
      m.partitions_pending_revocation = std::move(revoke);
      return {ErrorCode::none, std::move(m)};
    }
    add_all(kept, assign);
    m.state = unreleased ? MemberState::unreleased_partitions : MemberState::stable;
    update_member_epoch(m, r_.target_epoch);
    m.assigned_partitions = std::move(kept);
    m.partitions_pending_revocation.clear();
    return {ErrorCode::none, std::move(m)};
  }

  const ConsumerGroupMember& member_;
  const Reconciliation& r_;
};

}  // namespace

ReconcileResult reconcile(const ConsumerGroupMember& member, const Reconciliation& r) {
  return Step(member, r).build();
}

}  // namespace runnel::broker::group::consumer
