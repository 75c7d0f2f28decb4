// The offset manager (Kafka's OffsetMetadataManager): committed offsets.
// OffsetCommit, OffsetFetch and OffsetDelete, the expiry of offsets past
// offsets.retention.minutes, and the offset commit records it writes and
// replays. The offsets live on their group (classic_group.h), reached
// through the group manager, as Kafka's manager reaches them through its
// GroupMetadataManager.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "broker/group/group_metadata_manager.h"

namespace runnel::broker::group {

struct OffsetCommitEntry {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::optional<std::string> metadata;
  ErrorCode error = ErrorCode::none;  // set by the caller (unknown topic) or by commit_offsets
};

struct OffsetCommitRequest {
  std::string group_id;
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  int64_t retention_ms = -1;  // OffsetCommit v2-4; -1: the broker's retention
  // OffsetCommit v9+ answers GROUP_ID_NOT_FOUND for a group that does not
  // exist (older versions ILLEGAL_GENERATION), as Kafka's OffsetMetadataManager.
  bool unknown_group_not_found = false;
  std::vector<OffsetCommitEntry> entries;
};

struct FetchedOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
};

class OffsetMetadataManager {
 public:
  OffsetMetadataManager(const CoordinatorConfig& config, OffsetsStore& store, GroupMetadataManager& groups);

  void replay(const OffsetCommitKey& key, std::optional<ByteView> value);

  // Fills each entry's error; the offsets of the entries left at NONE are
  // stored, and take effect once their append completes: `done` then gets
  // the request back with every entry's answer.
  using CommitDone = std::function<void(OffsetCommitRequest)>;
  void commit_offsets(OffsetCommitRequest req, CommitDone done);
  // The group's committed offsets: `wanted` selects partitions (nullopt: all).
  // Partitions without a committed offset come back with offset -1.
  ErrorCode fetch_offsets(const std::string& group_id, const std::optional<std::vector<TopicPartition>>& wanted,
                          std::vector<FetchedOffset>& out) const;
  // OffsetDelete: `done` gets the top-level error and one error per partition.
  using DeleteDone = std::function<void(ErrorCode, std::vector<ErrorCode>)>;
  void delete_offsets(const std::string& group_id, const std::vector<TopicPartition>& partitions, DeleteDone done);
  // Removes expired offsets (offsets.retention.minutes) and groups left with nothing.
  void expire_offsets();

  // Tombstones for every offset of the group (Kafka's deleteAllOffsets).
  static std::vector<OffsetsRecord> delete_all_offsets(const Group& g);

 private:
  const CoordinatorConfig& config_;
  OffsetsStore& store_;
  GroupMetadataManager& groups_;
};

}  // namespace runnel::broker::group
