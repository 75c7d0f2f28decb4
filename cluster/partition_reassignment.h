// Moving a partition's replicas (Kafka's PartitionReassignmentReplicas,
// PartitionReassignmentRevert and the reassignment part of
// ReplicationControlManager), as AlterPartitionReassignments asks:
//
//   start     target T over current replicas C: replicas = T followed by
//             C - T in ascending id order (Kafka's), adding = T - C,
//             removing = C - T; leader and ISR unchanged. The new replicas
//             open on their brokers (the image lists them), follow the
//             leader and join the ISR by the leader's usual expansion.
//   complete  once every target replica is in the ISR: replicas = T,
//             ISR = ISR - removing, adding and removing cleared, and a
//             leader that is being removed hands over to the first target
//             replica in the ISR. The leader epoch goes up whenever a
//             replica is dropped, the leader staying or not (Kafka's
//             triggerLeaderEpochBumpForReplicaReassignmentIfNeeded), and
//             the brokers dropped delete their replica when the image says so.
//   cancel    back to the replicas before the move: replicas and ISR lose
//             the adding ones; a leader among them hands over likewise,
//             and the leader epoch goes up as for a completion.
//
// Who completes: the leader, in the same compare-and-swap that adds the
// last target replica to its ISR (partition_change.h, alter_isr), as
// Kafka's controller completes it while handling that AlterPartition. Only
// an ISR expansion (or the request itself, when T is already in sync) can
// make the condition true, so no separate watcher is needed, and the
// completion can never race the ISR change it depends on.
//
// Decisions only; no I/O. The handler (broker/handlers/45_...) writes.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cluster/metadata_image.h"
#include "cluster/partition_change.h"
#include "protocol/error_codes.h"

namespace runnel::cluster {

struct ReassignmentError {
  protocol::ErrorCode error;  // INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR, NO_REASSIGNMENT_IN_PROGRESS
  std::string message;        // Kafka's wording
};
using Reassigned = std::variant<PartitionRegistration, ReassignmentError>;

// The registration that moves `current` to `target` (completed at once
// when the target is already in sync). `registered`: the broker ids Kafka
// accepts in an assignment (registered, fenced or not). Without
// `allow_rf_change` (v1's AllowReplicationFactorChange false) a target of
// another length than the partition's replication factor is refused.
// Equal to `current` when nothing changes.
Reassigned reassign(const PartitionRegistration& current, const std::vector<NodeId>& target, bool allow_rf_change,
                    const IsLive& registered, const IsLive& live);

// The registration with `current`'s reassignment undone.
Reassigned cancel_reassignment(const PartitionRegistration& current, const IsLive& live);

// Completes `p`'s reassignment in place when every target replica is in
// its ISR; false (and `p` untouched) when none runs or it is not yet in
// sync. The partition epoch is the caller's to bump.
bool complete_reassignment(PartitionRegistration& p, const IsLive& live);

// The replicas before the move (Kafka's originalReplicas): replicas - adding.
std::vector<NodeId> original_replicas(const PartitionRegistration& p);
// The replicas after it (the target): replicas - removing.
std::vector<NodeId> target_replicas(const PartitionRegistration& p);

}  // namespace runnel::cluster
