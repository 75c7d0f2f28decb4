// The offset manager (Kafka's OffsetMetadataManager): committed offsets.
// OffsetCommit, TxnOffsetCommit, OffsetFetch and OffsetDelete, the expiry of
// offsets past offsets.retention.minutes, and the offset commit records it
// writes and replays. A transaction's offsets wait on their group, pending,
// until its marker on the group's partition commits or aborts them. The offsets live on their group (classic_group.h), reached
// through the group manager, as Kafka's manager reaches them through its
// GroupMetadataManager.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
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
  // TxnOffsetCommit: the transaction's producer. Its records are written as
  // the producer's transactional batch and stay pending until the marker.
  std::optional<TxnProducer> transaction;
  std::vector<OffsetCommitEntry> entries;
};

struct FetchedOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  std::string metadata;
  ErrorCode error = ErrorCode::none;  // UNSTABLE_OFFSET_COMMIT
};

class OffsetMetadataManager {
 public:
  OffsetMetadataManager(const CoordinatorConfig& config, OffsetsStore& store, GroupMetadataManager& groups);

  // `record_offset` is the record's offset in the log; `producer_id` that
  // of its transactional batch (-1 for a plain commit).
  void replay(const OffsetCommitKey& key, std::optional<ByteView> value, int64_t record_offset, int64_t producer_id);
  // The producer's transaction ended with a marker on the partition: its
  // pending offsets there are committed or dropped (Kafka's
  // replayEndTransactionMarker).
  void complete_transaction(int32_t partition, int64_t producer_id, bool commit);
  // The partition's groups left memory (GroupMetadataManager::unload*).
  void unload(const std::function<bool(int32_t)>& which);

  // Fills each entry's error; the offsets of the entries left at NONE are
  // stored, and take effect once their append completes: `done` then gets
  // the request back with every entry's answer.
  using CommitDone = std::function<void(OffsetCommitRequest)>;
  void commit_offsets(OffsetCommitRequest req, CommitDone done);
  // The group's committed offsets: `wanted` selects partitions (nullopt: all).
  // Partitions without a committed offset come back with offset -1. With
  // `require_stable` (OffsetFetch v7+), a partition an open transaction
  // holds an offset for answers UNSTABLE_OFFSET_COMMIT.
  ErrorCode fetch_offsets(const std::string& group_id, const std::optional<std::vector<TopicPartition>>& wanted,
                          std::vector<FetchedOffset>& out, bool require_stable = false) const;
  // OffsetDelete: `done` gets the top-level error and one error per partition.
  using DeleteDone = std::function<void(ErrorCode, std::vector<ErrorCode>)>;
  void delete_offsets(const std::string& group_id, const std::vector<TopicPartition>& partitions, DeleteDone done);
  // Removes expired offsets (offsets.retention.minutes) and groups left with nothing.
  void expire_offsets();
  // Groups whose offsets do not expire now whatever their classic state
  // (a KIP-848 consumer group with members keeps its offsets here).
  void set_in_use(std::function<bool(const std::string&)> in_use) { in_use_ = std::move(in_use); }

  // Tombstones for every offset of the group, pending ones included
  // (Kafka's deleteAllOffsets).
  static std::vector<OffsetsRecord> delete_all_offsets(const Group& g);

 private:
  const CoordinatorConfig& config_;
  OffsetsStore& store_;
  GroupMetadataManager& groups_;
  std::function<bool(const std::string&)> in_use_;
  // The producer's offset for the partition waits, pending, on its group
  // until the transaction's marker (complete_transaction).
  void hold_pending(Group& g, int64_t producer_id, const TopicPartition& tp, CommittedOffset c);
  // Kafka's openTransactionsByGroup, turned around: by __consumer_offsets
  // partition and producer id, the groups holding the producer's pending
  // offsets, so a marker finds them without a scan of every group.
  std::map<std::pair<int32_t, int64_t>, std::set<std::string>> open_transactions_;
};

}  // namespace runnel::broker::group
