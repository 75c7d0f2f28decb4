// The records of __consumer_offsets, in Kafka's binary formats
// (group-coordinator/src/main/resources/common/message/*.json). Key and value
// each start with an int16 schema version; the encoding is non-flexible:
//
//   OffsetCommitKey   v1   group string, topic string, partition int32
//   OffsetCommitValue v3   offset int64, leaderEpoch int32, metadata string,
//                          commitTimestamp int64
//                     v1   offset int64, metadata string, commitTimestamp int64,
//                          expireTimestamp int64 (written when one is set)
//   GroupMetadataKey  v2   group string
//   GroupMetadataValue v3  protocolType string, generation int32,
//                          protocol nullable string, leader nullable string,
//                          currentStateTimestamp int64, members [int32 count]:
//                          memberId string, groupInstanceId nullable string,
//                          clientId string, clientHost string,
//                          rebalanceTimeout int32, sessionTimeout int32,
//                          subscription bytes, assignment bytes
//
// Strings are int16 length + UTF-8 (-1 = null), bytes int32 length + data.
// A null value is a tombstone. Readers accept the older versions too
// (OffsetCommitValue 0-3, GroupMetadataValue 0-3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "protocol/codec/types.h"

namespace runnel::broker::group {

using protocol::Bytes;
using protocol::ByteView;

struct OffsetCommitKey {
  std::string group;
  std::string topic;
  int32_t partition = 0;
};

struct OffsetCommitValue {
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp = 0;
  std::optional<int64_t> expire_timestamp;  // only from v1 records (RetentionTimeMs)
};

struct GroupMetadataKey {
  std::string group;
};

struct GroupMemberRecord {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout = 0;
  int32_t session_timeout = 0;
  Bytes subscription;
  Bytes assignment;
};

struct GroupMetadataValue {
  std::string protocol_type;
  int32_t generation = 0;
  std::optional<std::string> protocol;
  std::optional<std::string> leader;
  int64_t current_state_timestamp = -1;
  std::vector<GroupMemberRecord> members;
};

Bytes encode_key(const OffsetCommitKey& k);
Bytes encode_key(const GroupMetadataKey& k);
Bytes encode_value(const OffsetCommitValue& v);
Bytes encode_value(const GroupMetadataValue& v);

// A decoded key: which record this is. monostate for an unknown version or
// malformed bytes (skipped when loading, as Kafka skips unknown keys).
using OffsetsKey = std::variant<std::monostate, OffsetCommitKey, GroupMetadataKey>;
OffsetsKey decode_key(ByteView bytes);
std::optional<OffsetCommitValue> decode_offset_value(ByteView bytes);
std::optional<GroupMetadataValue> decode_group_value(ByteView bytes);

// Java's String.hashCode over the UTF-16 code units of `s` (read as UTF-8),
// and Kafka's Utils.abs(hash) % partitions.
int32_t java_string_hash(const std::string& s);
int32_t offsets_partition_for(const std::string& group_id, int32_t partitions);

}  // namespace runnel::broker::group
