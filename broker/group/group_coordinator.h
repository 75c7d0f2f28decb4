// The group coordinator (Kafka's GroupCoordinatorShard): the one entry
// point the handlers and GroupService call. It owns the managers and routes
// to them: the classic group manager (group_metadata_manager.h) for
// JoinGroup, SyncGroup, Heartbeat, LeaveGroup, listing and describing; the
// KIP-848 consumer group manager (consumer/consumer_group_manager.h) for
// ConsumerGroupHeartbeat and ConsumerGroupDescribe; the offset manager
// (offset_metadata_manager.h) for OffsetCommit, OffsetFetch, OffsetDelete
// and expiry. A group id names one kind of group: a classic group with
// members keeps a consumer group out and the other way round; a consumer
// group's offsets are kept, as a simple consumer's, on an offsets-only
// classic entry that listing and describing do not show. What needs both stays here: replaying a
// __consumer_offsets record by its key type, and DeleteGroups, which writes
// the group's offset tombstones and its group tombstone in one append.
//
// Deterministic for the unit tests, which drive it with a virtual clock, a
// CoordinatorTimer of their own and an in-memory store.
//
// Durability: every change Kafka persists is written through OffsetsStore
// as __consumer_offsets records (offsets_format.h) before it takes effect;
// a failed write answers the request with an error and changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <optional>
#include <string>
#include <vector>

#include "broker/group/consumer/consumer_group_manager.h"
#include "broker/group/group_metadata_manager.h"
#include "broker/group/offset_metadata_manager.h"

namespace runnel::broker::group {

class GroupCoordinator {
 public:
  GroupCoordinator(CoordinatorConfig config, OffsetsStore& store, const Clock& clock, CoordinatorTimer& timer,
                   const consumer::TopicsImage& topics);

  const CoordinatorConfig& config() const { return config_; }
  int32_t partition_for(const std::string& group_id) const { return groups_.partition_for(group_id); }

  // Loading __consumer_offsets: while a partition loads, its groups answer
  // COORDINATOR_LOAD_IN_PROGRESS. Records are replayed in log order, with
  // their offset and, for a transactional batch's, its producer id.
  void begin_loading(int32_t partition) { groups_.begin_loading(partition); }
  void replay(int32_t partition, ByteView key, std::optional<ByteView> value, int64_t offset = -1,
              int64_t producer_id = -1);
  void replay_marker(int32_t partition, int64_t producer_id, bool commit) {
    offsets_.complete_transaction(partition, producer_id, commit);
  }
  // A transaction marker just written on the partition
  // (transaction/marker_writer.cc): the producer's pending offsets there are
  // committed or dropped. One written while the partition loads may be
  // past what the load read, so it is applied again after the load (no
  // offset commit is accepted meanwhile, so nothing newer can be pending).
  void complete_transaction(int32_t partition, int64_t producer_id, bool commit);
  void end_loading(int32_t partition);
  bool is_loading(int32_t partition) const { return groups_.is_loading(partition); }
  // Kafka's onResignation for every partition, as when __consumer_offsets
  // is deleted: waiting JoinGroups and SyncGroups answer NOT_COORDINATOR
  // and every group, with its offsets, leaves memory.
  void unload_all();

  // Coordinator ownership (Kafka's coordinator shards): a single node
  // coordinates every partition; a cluster's broker only those it leads,
  // owned from its election (own, then begin_loading) to its resignation
  // (unload_partition). Every request for a group of another partition
  // answers NOT_COORDINATOR.
  void coordinate_owned_only() { groups_.coordinate_owned_only(); }
  void own(int32_t partition) { groups_.own(partition); }
  bool owns(int32_t partition) const { return groups_.owns(partition); }
  // Kafka's onResignation for one partition: its waiting JoinGroups and
  // SyncGroups answer NOT_COORDINATOR; its groups and their offsets leave
  // memory.
  void unload_partition(int32_t partition);
  // The partition count that maps groups to partitions: in a cluster the
  // __consumer_offsets topic's, once this broker's image has it.
  void set_offsets_partitions(int32_t partitions) { config_.offsets_partitions = partitions; }

  void join(JoinRequest req, JoinCallback done);
  void sync(SyncRequest req, SyncCallback done) { groups_.sync(std::move(req), std::move(done)); }
  ErrorCode heartbeat(const std::string& group_id, const std::string& member_id,
                      const std::optional<std::string>& group_instance_id, int32_t generation) {
    return groups_.heartbeat(group_id, member_id, group_instance_id, generation);
  }
  LeaveResult leave(const std::string& group_id, const std::vector<LeaveMember>& members) {
    return groups_.leave(group_id, members);
  }

  // A consumer group's member commits with its member epoch as the
  // generation: STALE_MEMBER_EPOCH or UNKNOWN_MEMBER_ID when they do not
  // match (Kafka's ConsumerGroup.validateOffsetCommit); `api_version` is
  // OffsetCommit's (such a member needs v9+).
  void commit_offsets(OffsetCommitRequest req, OffsetMetadataManager::CommitDone done, int16_t api_version = 9);

  // ConsumerGroupHeartbeat: NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS
  // for a partition this coordinator does not serve yet, else the consumer
  // group manager's answer.
  void consumer_heartbeat(consumer::ConsumerHeartbeat req, consumer::HeartbeatDone done);
  // ConsumerGroupDescribe of one group: the error for a group this
  // coordinator cannot describe (NOT_COORDINATOR, loading, not found, not a
  // consumer group), else none and the group.
  ErrorCode describe_consumer_group(const std::string& group_id, const consumer::ConsumerGroup*& out) const;
  const consumer::ConsumerGroupManager& consumer_groups() const { return *consumer_groups_; }
  ErrorCode fetch_offsets(const std::string& group_id, const std::optional<std::vector<TopicPartition>>& wanted,
                          std::vector<FetchedOffset>& out, bool require_stable = false) const {
    return offsets_.fetch_offsets(group_id, wanted, out, require_stable);
  }
  void delete_offsets(const std::string& group_id, const std::vector<TopicPartition>& partitions,
                      OffsetMetadataManager::DeleteDone done) {
    offsets_.delete_offsets(group_id, partitions, std::move(done));
  }
  void expire_offsets() { offsets_.expire_offsets(); }

  // Classic and consumer groups; a consumer group's offsets-only classic
  // entry is not listed.
  ErrorCode list_groups(std::vector<GroupListing>& out) const;
  GroupDescription describe(const std::string& group_id) const { return groups_.describe(group_id); }
  // DeleteGroups for one group: `done` gets its answer once the tombstones
  // are stored (the group is gone from then on).
  void delete_group(const std::string& group_id, std::function<void(ErrorCode)> done);

  // For tests and DescribeGroups.
  const Group* find(const std::string& group_id) const { return groups_.find(group_id); }
  template <typename F>
  void for_each_group(F&& f) const {
    groups_.for_each_group(std::forward<F>(f));
  }

 private:
  bool has_classic_members(const std::string& group_id) const;
  // The consumer group of the id, unless a classic group with members holds it.
  const consumer::ConsumerGroup* consumer_group_of(const std::string& group_id) const;
  // NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS for a group whose
  // partition this coordinator does not serve now, else none.
  ErrorCode not_serving(const std::string& group_id) const;

  CoordinatorConfig config_;  // before the managers, which keep a reference
  OffsetsStore& store_;
  GroupMetadataManager groups_;
  OffsetMetadataManager offsets_;
  std::unique_ptr<consumer::ConsumerGroupManager> consumer_groups_;
  // Markers written while their partition loads: producer id, commit.
  std::map<int32_t, std::vector<std::pair<int64_t, bool>>> completed_while_loading_;
};

}  // namespace runnel::broker::group
