// The classic group manager (Kafka's GroupMetadataManager, classic part):
// it owns the groups in memory and their state machine. JoinGroup,
// SyncGroup, Heartbeat and LeaveGroup, the timers that drive rebalances
// and expire members, the group metadata records (written when a
// generation's assignment is stored, replayed when __consumer_offsets
// loads), which partitions are loading, listing and describing groups.
// Committed offsets are the offset manager's (offset_metadata_manager.h);
// it reaches the groups through this class, as Kafka's does.
//
// Synchronous and single-threaded on purpose: callers run it on the broker's
// event loop, requests that must wait (JoinGroup until the rebalance
// completes, a follower's SyncGroup until the leader's) pass a callback that
// runs later, and time moves only through the deadlines it hands its
// CoordinatorTimer (coordinator_timer.h): sessions, rebalance timeouts,
// initial delays, pending syncs.
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

#include "base/clock.h"
#include "broker/group/classic_group.h"
#include "broker/group/coordinator_config.h"
#include "broker/group/coordinator_timer.h"
#include "broker/group/offsets_format.h"
#include "broker/group/offsets_store.h"

namespace runnel::broker::group {

using runnel::Clock;  // the coordinator reads its wall_ms()

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

struct GroupListing {
  std::string group_id;
  std::string protocol_type;
  std::string state;           // Kafka's name of the group's state
  std::string type = "classic";  // or "consumer" (KIP-848)
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

class GroupMetadataManager {
 public:
  GroupMetadataManager(const CoordinatorConfig& config, OffsetsStore& store, const Clock& clock, CoordinatorTimer& timer);

  int32_t partition_for(const std::string& group_id) const;
  int64_t now() const { return clock_.wall_ms(); }

  // Loading __consumer_offsets: while a partition loads, its groups answer
  // COORDINATOR_LOAD_IN_PROGRESS.
  void begin_loading(int32_t partition) { loading_.insert(partition); }
  void replay(const GroupMetadataKey& key, std::optional<ByteView> value);
  void end_loading(int32_t partition);
  bool is_loading(int32_t partition) const { return loading_.count(partition) > 0; }
  void unload_all();

  // Which __consumer_offsets partitions this coordinator serves (Kafka's
  // coordinator shards): every one until coordinate_owned_only() (a single
  // node), else those own() added, as this broker leads them. A group of
  // another partition answers NOT_COORDINATOR, and is never in memory.
  void coordinate_owned_only() { owned_.emplace(); }
  void own(int32_t partition) {
    if (owned_) owned_->insert(partition);
  }
  bool owns(int32_t partition) const { return !owned_ || owned_->count(partition) > 0; }
  // Kafka's onResignation for one partition: its waiting JoinGroups and
  // SyncGroups answer NOT_COORDINATOR, its groups with their offsets leave
  // memory, and it is no longer owned (nor loading).
  void unload_partition(int32_t partition);

  void join(JoinRequest req, JoinCallback done);
  void sync(SyncRequest req, SyncCallback done);
  ErrorCode heartbeat(const std::string& group_id, const std::string& member_id,
                      const std::optional<std::string>& group_instance_id, int32_t generation);
  LeaveResult leave(const std::string& group_id, const std::vector<LeaveMember>& members);

  ErrorCode list_groups(std::vector<GroupListing>& out) const;
  GroupDescription describe(const std::string& group_id) const;

  // For the offset manager and DeleteGroups.
  const Group* find(const std::string& group_id) const;
  Group* find_mutable(const std::string& group_id);
  Group& get_or_create(const std::string& group_id);
  std::vector<std::string> group_ids() const;
  // Every group this coordinator holds, for /metrics.
  template <typename F>
  void for_each_group(F&& f) const {
    for (const auto& [_, g] : groups_) f(*g);
  }
  // A member's commit keeps its session alive, as a heartbeat would.
  void schedule_heartbeat(const Group& g, const Member& m);
  // The group metadata tombstone that deletes the group from the log.
  static OffsetsRecord group_tombstone(const Group& g);
  // The group goes Dead and leaves memory, its timers cancelled.
  void remove_group(Group& g);

 private:
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
  void expire_heartbeat(const std::string& group_id, const std::string& member_id);
  void expire_pending_member(const std::string& group_id, const std::string& member_id);
  void schedule_join(const Group& g, int32_t delay_ms);
  void join_deadline(const std::string& group_id);
  void expire_pending_sync(const std::string& group_id);
  JoinResult current_join_result(const Group& g, const Member& m, bool include_members, bool skip_assignment) const;
  void transition(Group& g, GroupState to);
  // Writes the group's metadata record; `done` runs when it is stored.
  void store_group(Group& g, AppendDone done);
  void drop_group(const std::string& group_id);
  // onGroupUnloaded for the groups `which` selects (by partition).
  void unload(const std::function<bool(int32_t)>& which);

  const CoordinatorConfig& config_;
  OffsetsStore& store_;
  const Clock& clock_;
  CoordinatorTimer& timer_;
  std::map<std::string, std::unique_ptr<Group>> groups_;
  std::set<int32_t> loading_;
  std::optional<std::set<int32_t>> owned_;  // nullopt: every partition
  uint64_t join_counter_ = 0;
};

}  // namespace runnel::broker::group
