// How a partition's registration changes (Kafka's PartitionChangeBuilder):
// the controller re-elects when brokers come and go, and a leader changes
// its own ISR (Kafka's AlterPartition). Each change bumps the partition
// epoch, and a change of leader bumps the leader epoch, so replicas and
// clients can tell which registration is newer; the write that installs
// it is a compare-and-swap on the partition's key, so of two concurrent
// changes one fails and re-reads (etcd/key_layout.h, partitions/).
//
// These functions decide; they do no I/O. Who writes what:
//   controller   reelect() for each partition touched by a broker's
//                registration coming, going or being fenced
//   leader       alter_isr() when a follower falls behind or catches up
//   any broker   reassign() / cancel_reassignment() for
//                AlterPartitionReassignments (partition_reassignment.h)
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cluster/metadata_image.h"

namespace runnel::cluster {

using IsLive = std::function<bool(NodeId)>;

// The registration once the controller has applied which brokers are live:
//  - a replica that is not live leaves the ISR, unless it is the last
//    member (it holds every committed record and must be able to lead
//    again when it returns);
//  - a leader that is not live, or not in the ISR, is replaced by the first
//    live ISR member in replica order (the preferred leader first); with
//    `unclean` (unclean.leader.election.enable) and no such member, by the
//    first live replica, which then is the whole ISR (records may be lost:
//    that is what the setting accepts); else the partition has no leader;
//  - a leaderless partition whose ISR member returns is led by it again.
// nullopt when nothing changes.
std::optional<PartitionRegistration> reelect(const PartitionRegistration& current, const IsLive& live, bool unclean);

// Kafka's preferred leader election: the first replica leads when it is
// live and in the ISR. nullopt when it already leads or cannot.
std::optional<PartitionRegistration> elect_preferred(const PartitionRegistration& current, const IsLive& live);

// A leader's new ISR for its partition, checked as Kafka's controller
// checks AlterPartition: from the current leader at the current leader
// epoch, every member a replica, the leader itself included, and never
// empty. The error is Kafka's error name for the refusal. An expansion
// that brings every target replica of a reassignment into the ISR also
// completes it (partition_reassignment.h).
struct IsrChangeError {
  std::string error;  // FENCED_LEADER_EPOCH, NOT_LEADER_OR_FOLLOWER, INVALID_REQUEST, INELIGIBLE_REPLICA
};
std::variant<PartitionRegistration, IsrChangeError> alter_isr(const PartitionRegistration& current, NodeId leader,
                                                             LeaderEpoch leader_epoch, std::vector<NodeId> new_isr,
                                                             const IsLive& live);

// The registration of a new partition placed on `replicas`: all in sync,
// the first leads, epochs at 0.
PartitionRegistration new_partition(std::vector<NodeId> replicas);

}  // namespace runnel::cluster
