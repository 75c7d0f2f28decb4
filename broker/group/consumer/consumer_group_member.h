// One member of a KIP-848 consumer group (Kafka's ConsumerGroupMember): what
// its heartbeats declared and where its reconciliation stands. The fields
// are those of Kafka's ConsumerGroupMemberMetadataValue and
// ConsumerGroupCurrentMemberAssignmentValue records, so a member survives a
// coordinator move as it was.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "broker/group/consumer/assignment.h"

namespace runnel::broker::group::consumer {

// Kafka's MemberState, with its persisted values.
enum class MemberState : int8_t {
  stable = 0,                 // reconciled with the target assignment
  unrevoked_partitions = 1,   // must revoke partitions before its next epoch
  unreleased_partitions = 2,  // at the target epoch, waiting for partitions others still own
  unknown = 127,              // a state a newer coordinator wrote
};

MemberState member_state_from(int8_t value);  // unknown for any other value
const char* member_state_name(MemberState s);  // "STABLE", "UNREVOKED_PARTITIONS", ...

struct ConsumerGroupMember {
  std::string member_id;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  std::string client_id;
  std::string client_host;
  std::vector<std::string> subscribed_topic_names;  // sorted
  std::optional<std::string> subscribed_topic_regex;
  std::optional<std::string> server_assignor;
  int32_t rebalance_timeout_ms = -1;

  int32_t member_epoch = 0;
  int32_t previous_member_epoch = 0;
  MemberState state = MemberState::stable;
  Assignment assigned_partitions;
  Assignment partitions_pending_revocation;
};

}  // namespace runnel::broker::group::consumer
