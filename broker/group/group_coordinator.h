// The classic group coordinator (Kafka's GroupMetadataManager, classic
// part): JoinGroup, SyncGroup, Heartbeat, LeaveGroup, offset commits and
// fetches, group listing and deletion, and the timers that drive
// rebalances and expire members and offsets.
//
// Synchronous and single-threaded on purpose: callers run it on the broker's
// event loop, requests that must wait (JoinGroup until the rebalance
// completes, a follower's SyncGroup until the leader's) pass a callback that
// runs later, and time moves only through the deadlines it hands its
// CoordinatorTimer (coordinator_timer.h): sessions, rebalance timeouts,
// initial delays, pending syncs. That keeps it deterministic for the unit
// tests, which drive it with a virtual clock and an in-memory store.
//
// Durability: every change Kafka persists is written through OffsetsStore
// as __consumer_offsets records (offsets_format.h) before it takes effect;
// a failed write answers the request with an error and changes nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "broker/group/classic_group.h"
#include "broker/group/coordinator_timer.h"
#include "broker/group/offsets_format.h"

namespace runnel::broker::group {

struct CoordinatorConfig {
  int32_t offsets_partitions = 50;             // offsets.topic.num.partitions
  int32_t initial_rebalance_delay_ms = 3000;   // group.initial.rebalance.delay.ms
  int32_t min_session_timeout_ms = 6000;       // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;    // group.max.session.timeout.ms
  int32_t max_size = INT32_MAX;                // group.max.size
  int32_t offset_metadata_max_bytes = 4096;    // offset.metadata.max.bytes
  int64_t offsets_retention_ms = 10080LL * 60 * 1000;  // offsets.retention.minutes
};

// One __consumer_offsets record: key and value (nullopt = tombstone).
struct OffsetsRecord {
  Bytes key;
  std::optional<Bytes> value;
};

// Where the coordinator's records go: a partition of __consumer_offsets.
class OffsetsStore {
 public:
  virtual ~OffsetsStore() = default;
  virtual std::error_code append(int32_t partition, const std::vector<OffsetsRecord>& records) = 0;
};

struct JoinRequest {
  std::string group_id;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  bool require_known_member_id = false;  // JoinGroup v4+
  bool supports_skip_assignment = false;  // JoinGroup v9+
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = 0;
  int32_t session_timeout_ms = 0;
  std::string protocol_type;
  std::vector<Protocol> protocols;
};

struct SyncRequest {
  std::string group_id;
  int32_t generation = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::vector<std::pair<std::string, Bytes>> assignments;  // the leader's
};

struct LeaveMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
};

struct LeaveResult {
  ErrorCode error = ErrorCode::none;  // the whole request
  std::vector<ErrorCode> members;     // one per LeaveMember
};

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

struct GroupListing {
  std::string group_id;
  std::string protocol_type;
  GroupState state;
};

struct GroupDescription {
  ErrorCode error = ErrorCode::none;
  std::string group_id;
  std::string state;
  std::string protocol_type;
  std::string protocol_data;
  struct DescribedMember {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    std::string client_id;
    std::string client_host;
    Bytes metadata;
    Bytes assignment;
  };
  std::vector<DescribedMember> members;
};

class GroupCoordinator {
 public:
  using Clock = std::function<int64_t()>;  // milliseconds

  GroupCoordinator(CoordinatorConfig config, OffsetsStore& store, Clock clock, CoordinatorTimer& timer);

  const CoordinatorConfig& config() const { return config_; }
  int32_t partition_for(const std::string& group_id) const;

  // Loading __consumer_offsets: while a partition loads, its groups answer
  // COORDINATOR_LOAD_IN_PROGRESS. Records are replayed in log order.
  void begin_loading(int32_t partition) { loading_.insert(partition); }
  void replay(int32_t partition, ByteView key, std::optional<ByteView> value);
  void end_loading(int32_t partition);
  bool is_loading(int32_t partition) const { return loading_.count(partition) > 0; }
  // Kafka's onResignation for every partition, as when __consumer_offsets
  // is deleted: waiting JoinGroups and SyncGroups answer NOT_COORDINATOR
  // and every group, with its offsets, leaves memory.
  void unload_all();

  void join(JoinRequest req, JoinCallback done);
  void sync(SyncRequest req, SyncCallback done);
  ErrorCode heartbeat(const std::string& group_id, const std::string& member_id,
                      const std::optional<std::string>& group_instance_id, int32_t generation);
  LeaveResult leave(const std::string& group_id, const std::vector<LeaveMember>& members);

  // Fills each entry's error; the offsets of the entries left at NONE are stored.
  void commit_offsets(OffsetCommitRequest& req);
  // The group's committed offsets: `wanted` selects partitions (nullopt: all).
  // Partitions without a committed offset come back with offset -1.
  ErrorCode fetch_offsets(const std::string& group_id, const std::optional<std::vector<TopicPartition>>& wanted,
                          std::vector<FetchedOffset>& out) const;

  ErrorCode list_groups(std::vector<GroupListing>& out) const;
  GroupDescription describe(const std::string& group_id) const;
  ErrorCode delete_group(const std::string& group_id);
  // OffsetDelete: the top-level error, and per partition errors in `errors`.
  ErrorCode delete_offsets(const std::string& group_id, const std::vector<TopicPartition>& partitions,
                           std::vector<ErrorCode>& errors);

  // Removes expired offsets (offsets.retention.minutes) and groups left with nothing.
  void expire_offsets();

  // For tests and DescribeGroups.
  const Group* find(const std::string& group_id) const;

 private:
  Group* find_mutable(const std::string& group_id);
  Group& get_or_create(const std::string& group_id);
  int64_t now() const { return clock_(); }

  void join_new_member(Group& g, JoinRequest& req, JoinCallback& done);
  void join_static_member(Group& g, JoinRequest& req, JoinCallback& done);
  void join_current_member(Group& g, JoinRequest& req, JoinCallback& done);
  void add_member_and_rebalance(Group& g, JoinRequest& req, const std::string& member_id, JoinCallback done);
  void update_member_and_rebalance(Group& g, Member& m, JoinRequest& req, JoinCallback done);
  void maybe_prepare_rebalance(Group& g, const std::string& reason);
  void prepare_rebalance(Group& g, const std::string& reason);
  void maybe_complete_join(Group& g);
  void complete_join(Group& g);
  void remove_member(Group& g, const std::string& member_id);
  void remove_member_and_update_group(Group& g, const std::string& member_id, const std::string& reason);
  void remove_pending_member(Group& g, const std::string& member_id);
  void reset_and_propagate_assignment_error(Group& g, ErrorCode error);
  void propagate_assignment(Group& g, ErrorCode error);
  // The timers' operations look their group up again when they run: a group
  // or member gone by then is simply not there.
  void schedule_heartbeat(const Group& g, const Member& m);
  void expire_heartbeat(const std::string& group_id, const std::string& member_id);
  void expire_pending_member(const std::string& group_id, const std::string& member_id);
  void schedule_join(const Group& g, int32_t delay_ms);
  void join_deadline(const std::string& group_id);
  void expire_pending_sync(const std::string& group_id);
  JoinResult current_join_result(const Group& g, const Member& m, bool include_members, bool skip_assignment) const;
  void transition(Group& g, GroupState to);
  std::error_code store_group(Group& g);
  void drop_group(const std::string& group_id);

  CoordinatorConfig config_;
  OffsetsStore& store_;
  Clock clock_;
  CoordinatorTimer& timer_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::set<int32_t> loading_;
  uint64_t join_counter_ = 0;
};

}  // namespace runnel::broker::group
