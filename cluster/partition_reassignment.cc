#include "cluster/partition_reassignment.h"

#include <algorithm>
#include <set>

namespace runnel::cluster {

namespace {

using protocol::ErrorCode;

bool contains(const std::vector<NodeId>& v, NodeId n) { return std::find(v.begin(), v.end(), n) != v.end(); }

std::vector<NodeId> without(const std::vector<NodeId>& v, const std::vector<NodeId>& out) {
  std::vector<NodeId> r;
  for (NodeId n : v)
    if (!contains(out, n)) r.push_back(n);
  return r;
}

// a - b in ascending order (Kafka computes the differences as TreeSets).
std::vector<NodeId> sorted_difference(const std::vector<NodeId>& a, const std::vector<NodeId>& b) {
  std::set<NodeId> s(a.begin(), a.end());
  for (NodeId n : b) s.erase(n);
  return {s.begin(), s.end()};
}

// The leader stays when still an ISR member, else the first replica in the
// ISR that is live leads, at the next leader epoch (none: leaderless).
void keep_or_elect_leader(PartitionRegistration& p, const IsLive& live) {
  if (p.has_leader() && contains(p.isr, p.leader) && contains(p.replicas, p.leader)) return;
  NodeId chosen = kNoNode;
  for (NodeId r : p.replicas)
    if (contains(p.isr, r) && live(r)) {
      chosen = r;
      break;
    }
  if (chosen == p.leader) return;
  p.leader = chosen;
  p.leader_epoch = LeaderEpoch(p.leader_epoch.value() + 1);
}

// Kafka's triggerLeaderEpochBumpForReplicaReassignmentIfNeeded: a change
// that drops a replica bumps the leader epoch even when the leader stays,
// so the dropped replica's fetches are fenced at once.
void bump_if_replicas_dropped(PartitionRegistration& p, const PartitionRegistration& before) {
  if (p.leader != before.leader || p.leader_epoch != before.leader_epoch) return;  // already bumped
  for (NodeId r : before.replicas)
    if (!contains(p.replicas, r)) {
      p.leader_epoch = LeaderEpoch(p.leader_epoch.value() + 1);
      return;
    }
}

std::optional<ReassignmentError> validate(const std::vector<NodeId>& target, const IsLive& registered) {
  if (target.empty())
    return ReassignmentError{ErrorCode::invalid_replica_assignment,
                             "The manual partition assignment includes an empty replica list."};
  std::set<NodeId> seen;
  for (NodeId n : target) {
    if (!seen.insert(n).second)
      return ReassignmentError{ErrorCode::invalid_replica_assignment,
                               "The manual partition assignment includes the broker " + std::to_string(n.value()) +
                                   " more than once."};
    if (!registered(n))
      return ReassignmentError{ErrorCode::invalid_replica_assignment,
                               "The manual partition assignment includes broker " + std::to_string(n.value()) +
                                   ", but no such broker is registered."};
  }
  return std::nullopt;
}

}  // namespace

std::vector<NodeId> original_replicas(const PartitionRegistration& p) { return without(p.replicas, p.adding_replicas); }

std::vector<NodeId> target_replicas(const PartitionRegistration& p) { return without(p.replicas, p.removing_replicas); }

bool complete_reassignment(PartitionRegistration& p, const IsLive& live) {
  if (!p.reassigning()) return false;
  std::vector<NodeId> replicas = target_replicas(p);
  std::vector<NodeId> isr;
  // Kept in replica order, as the ISR is everywhere else.
  for (NodeId r : replicas)
    if (contains(p.isr, r)) isr.push_back(r);
  if (replicas.empty() || isr.size() != replicas.size()) return false;
  const PartitionRegistration before = p;
  p.replicas = std::move(replicas);
  p.isr = std::move(isr);
  p.adding_replicas.clear();
  p.removing_replicas.clear();
  keep_or_elect_leader(p, live);
  bump_if_replicas_dropped(p, before);
  return true;
}

Reassigned reassign(const PartitionRegistration& current, const std::vector<NodeId>& target, bool allow_rf_change,
                    const IsLive& registered, const IsLive& live) {
  if (auto bad = validate(target, registered)) return *bad;
  // KIP-860: the factor compared is the one the partition is heading for
  // (its target, while a move runs).
  const size_t factor = target_replicas(current).size();
  if (!allow_rf_change && factor != target.size())
    return ReassignmentError{ErrorCode::invalid_replication_factor, "The replication factor is changed from " +
                                                                        std::to_string(factor) + " to " +
                                                                        std::to_string(target.size())};
  PartitionRegistration next = current;
  // Over a move already running, the current replicas include its adding
  // ones: those the new target drops are removed like any other.
  next.removing_replicas = sorted_difference(current.replicas, target);
  next.adding_replicas = sorted_difference(target, current.replicas);
  next.replicas = target;
  next.replicas.insert(next.replicas.end(), next.removing_replicas.begin(), next.removing_replicas.end());
  complete_reassignment(next, live);
  if (next == current) return current;
  next.partition_epoch = current.partition_epoch + 1;
  return next;
}

Reassigned cancel_reassignment(const PartitionRegistration& current, const IsLive& live) {
  if (!current.reassigning())
    return ReassignmentError{ErrorCode::no_reassignment_in_progress, "No reassignment is in progress."};
  PartitionRegistration next = current;
  next.replicas = original_replicas(current);
  next.isr = without(current.isr, current.adding_replicas);
  // Kafka's revert would then need an unclean election (only adding
  // replicas were in sync); it refuses unless that is allowed, and so
  // does this, always.
  if (next.isr.empty())
    return ReassignmentError{ErrorCode::invalid_replica_assignment,
                             "Unable to revert the partition assignment because it would require an unclean leader "
                             "election."};
  next.adding_replicas.clear();
  next.removing_replicas.clear();
  keep_or_elect_leader(next, live);
  bump_if_replicas_dropped(next, current);
  next.partition_epoch = current.partition_epoch + 1;
  return next;
}

}  // namespace runnel::cluster
