// A consumer group's records in __consumer_offsets, in Kafka 4.1's formats
// (protocol/schema/coordinator/): building them from the group's state and
// replaying them into it. The coordinator changes a group only by writing
// records and then replaying what it wrote, the same path the load takes.
//
// Kafka's order, kept here: a joining member's subscription, then the group
// epoch, then the target assignment (its members, then its epoch), then the
// member's current assignment; a departing member's current assignment,
// target and subscription tombstones, then the new group epoch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "broker/group/consumer/consumer_group.h"
#include "broker/group/offsets_store.h"
#include "protocol/codec/types.h"

namespace runnel::broker::group::consumer {

OffsetsRecord group_epoch_record(const std::string& group_id, int32_t epoch, int64_t metadata_hash);
OffsetsRecord group_epoch_tombstone(const std::string& group_id);
OffsetsRecord subscription_record(const std::string& group_id, const ConsumerGroupMember& m);
OffsetsRecord subscription_tombstone(const std::string& group_id, const std::string& member_id);
OffsetsRecord target_member_record(const std::string& group_id, const std::string& member_id, const Assignment& a);
OffsetsRecord target_member_tombstone(const std::string& group_id, const std::string& member_id);
OffsetsRecord target_epoch_record(const std::string& group_id, int32_t assignment_epoch);
OffsetsRecord target_epoch_tombstone(const std::string& group_id);
OffsetsRecord current_assignment_record(const std::string& group_id, const ConsumerGroupMember& m);
OffsetsRecord current_assignment_tombstone(const std::string& group_id, const std::string& member_id);

// Whether a __consumer_offsets key of this type is a consumer group's.
bool is_consumer_group_record(int16_t type);

// Applies one record to the groups, as Kafka's replay does: a value creates
// the group (and member) it names, a group epoch tombstone removes the
// group, a subscription tombstone the member. False for a record that does
// not decode, which changes nothing.
bool replay(std::map<std::string, ConsumerGroup>& groups, protocol::ByteView key,
            const std::optional<protocol::ByteView>& value);

}  // namespace runnel::broker::group::consumer
