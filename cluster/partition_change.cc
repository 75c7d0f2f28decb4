#include "cluster/partition_change.h"

#include <algorithm>

#include "cluster/partition_reassignment.h"

namespace runnel::cluster {

namespace {

// Installs a new leader (or none), bumping the leader epoch when it changes.
void set_leader(PartitionRegistration& p, NodeId leader) {
  if (p.leader == leader) return;
  p.leader = leader;
  p.leader_epoch = LeaderEpoch(p.leader_epoch.value() + 1);
}

}  // namespace

PartitionRegistration new_partition(std::vector<NodeId> replicas) {
  PartitionRegistration p;
  p.isr = replicas;
  p.leader = replicas.empty() ? kNoNode : replicas.front();
  p.replicas = std::move(replicas);
  return p;
}

std::optional<PartitionRegistration> reelect(const PartitionRegistration& current, const IsLive& live, bool unclean) {
  PartitionRegistration next = current;
  // Dead members leave the ISR, the last one excepted.
  std::vector<NodeId> isr;
  for (NodeId n : current.isr)
    if (live(n)) isr.push_back(n);
  if (isr.empty() && !current.isr.empty()) {
    // Keep the leader if it was in the ISR, else the first member.
    NodeId last = current.in_isr(current.leader) ? current.leader : current.isr.front();
    isr.push_back(last);
  }
  next.isr = std::move(isr);

  const bool leader_ok = current.has_leader() && live(current.leader) && next.in_isr(current.leader);
  if (!leader_ok) {
    NodeId chosen = kNoNode;
    for (NodeId r : current.replicas)
      if (live(r) && next.in_isr(r)) {
        chosen = r;
        break;
      }
    if (chosen == kNoNode && unclean) {
      for (NodeId r : current.replicas)
        if (live(r)) {
          chosen = r;
          break;
        }
      if (chosen != kNoNode) next.isr = {chosen};
    }
    set_leader(next, chosen);
  }
  if (next == current) return std::nullopt;
  next.partition_epoch = current.partition_epoch + 1;
  return next;
}

std::optional<PartitionRegistration> elect_preferred(const PartitionRegistration& current, const IsLive& live) {
  if (current.replicas.empty()) return std::nullopt;
  NodeId preferred = current.replicas.front();
  if (current.leader == preferred || !live(preferred) || !current.in_isr(preferred)) return std::nullopt;
  PartitionRegistration next = current;
  set_leader(next, preferred);
  next.partition_epoch = current.partition_epoch + 1;
  return next;
}

std::variant<PartitionRegistration, IsrChangeError> alter_isr(const PartitionRegistration& current, NodeId leader,
                                                             LeaderEpoch leader_epoch, std::vector<NodeId> new_isr,
                                                             const IsLive& live) {
  if (leader_epoch < current.leader_epoch) return IsrChangeError{"FENCED_LEADER_EPOCH"};
  if (leader != current.leader || leader_epoch != current.leader_epoch) return IsrChangeError{"NOT_LEADER_OR_FOLLOWER"};
  std::sort(new_isr.begin(), new_isr.end());
  new_isr.erase(std::unique(new_isr.begin(), new_isr.end()), new_isr.end());
  if (std::find(new_isr.begin(), new_isr.end(), leader) == new_isr.end()) return IsrChangeError{"INVALID_REQUEST"};
  std::vector<NodeId> ordered;
  // Kept in replica order, as the ISR is everywhere else.
  for (NodeId r : current.replicas)
    if (std::binary_search(new_isr.begin(), new_isr.end(), r)) ordered.push_back(r);
  if (ordered.size() != new_isr.size()) return IsrChangeError{"INVALID_REQUEST"};  // a member that is no replica
  // A member joining must be live (Kafka: INELIGIBLE_REPLICA for a fenced one).
  for (NodeId n : ordered)
    if (!current.in_isr(n) && !live(n)) return IsrChangeError{"INELIGIBLE_REPLICA"};
  PartitionRegistration next = current;
  next.isr = std::move(ordered);
  // The last target replica joining completes a reassignment, in this same
  // write (Kafka's controller does it while handling the AlterPartition).
  if (next.isr != current.isr) complete_reassignment(next, live);
  if (next != current) next.partition_epoch = current.partition_epoch + 1;
  return next;
}

}  // namespace runnel::cluster
