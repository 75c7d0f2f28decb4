// The reconciliation engine of KIP-848 (Kafka's CurrentAssignmentBuilder):
// moves one member from its current assignment towards the group's target
// assignment, one safe step per heartbeat. A partition is never assigned to
// a member while another still owns it: a member first revokes what it must
// give up (staying at its epoch, UNREVOKED_PARTITIONS), then takes the
// target epoch with what is free, and waits for the rest
// (UNRELEASED_PARTITIONS) until their owners let go.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>

#include "broker/group/consumer/assignment.h"
#include "broker/group/consumer/consumer_group_member.h"
#include "protocol/error_codes.h"

namespace runnel::broker::group::consumer {

struct Reconciliation {
  // The member's target: its part of the group's target assignment at
  // `target_epoch`.
  int32_t target_epoch = 0;
  const Assignment* target = nullptr;
  // The topics the member subscribes to now (names and regex matches
  // resolved to ids). Partitions of any other topic are revoked.
  const std::set<TopicId>* subscribed = nullptr;
  // The epoch of the member that owns the partition now, -1 if none does.
  std::function<int32_t(const TopicId&, int32_t)> current_partition_epoch;
  // The partitions the member reports owning in this heartbeat; nullopt
  // when the heartbeat left the field null (unchanged since the last one).
  const std::optional<Assignment>* owned = nullptr;
  // The subscription changed in this heartbeat: partitions of topics no
  // longer subscribed are revoked even at an unchanged epoch.
  bool subscription_changed = false;
};

// The member after this step (the member as it was when it cannot move
// on), or FENCED_MEMBER_EPOCH for a member in a state this coordinator does
// not know, still owning partitions: it must give them up and rejoin.
struct ReconcileResult {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  ConsumerGroupMember member;
};

ReconcileResult reconcile(const ConsumerGroupMember& member, const Reconciliation& r);

}  // namespace runnel::broker::group::consumer
