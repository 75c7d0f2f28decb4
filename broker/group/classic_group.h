// One classic consumer group: its members, generation, chosen protocol,
// state (ClassicGroupState.java) and committed offsets. Plain data plus the
// questions the coordinator asks of it; the transitions live in
// group_metadata_manager.cc.
//
//   Empty --join--> PreparingRebalance --all joined / timeout--> CompletingRebalance
//   CompletingRebalance --leader's SyncGroup--> Stable
//   CompletingRebalance / Stable --join, leave, expiry--> PreparingRebalance
//   PreparingRebalance --no member left--> Empty;  Empty --delete / expiry--> Dead
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/codec/types.h"
#include "protocol/error_codes.h"

namespace runnel::broker::group {

using protocol::Bytes;
using protocol::ErrorCode;

enum class GroupState { empty, preparing_rebalance, completing_rebalance, stable, dead };
const char* state_name(GroupState s);  // Kafka's names: "Empty", "PreparingRebalance", ...

struct JoinResult {
  struct Member {
    std::string member_id;
    std::optional<std::string> group_instance_id;
    Bytes metadata;
  };
  ErrorCode error = ErrorCode::none;
  int32_t generation = -1;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::string leader;
  std::string member_id;
  bool skip_assignment = false;
  std::vector<Member> members;  // only for the leader
};

struct SyncResult {
  ErrorCode error = ErrorCode::none;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  Bytes assignment;
};

using JoinCallback = std::function<void(JoinResult)>;
using SyncCallback = std::function<void(SyncResult)>;

struct Protocol {
  std::string name;
  Bytes metadata;
  bool operator==(const Protocol&) const = default;
};

struct Member {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::string client_id;
  std::string client_host;
  int32_t rebalance_timeout_ms = 0;
  int32_t session_timeout_ms = 0;
  std::string protocol_type;
  std::vector<Protocol> protocols;  // in the member's order of preference
  Bytes assignment;
  JoinCallback awaiting_join;  // set while its JoinGroup waits
  SyncCallback awaiting_sync;  // set while its SyncGroup waits
  uint64_t join_order = 0;  // leader choice prefers the earliest joined

  const Bytes* metadata(const std::string& protocol) const;
  bool is_awaiting_join() const { return static_cast<bool>(awaiting_join); }
  bool is_awaiting_sync() const { return static_cast<bool>(awaiting_sync); }
};

struct CommittedOffset {
  int64_t offset = 0;
  int32_t leader_epoch = -1;
  std::string metadata;
  int64_t commit_timestamp = 0;
  std::optional<int64_t> expire_timestamp;
  // Where its record is in __consumer_offsets (-1: not known): when a
  // transaction's offsets are committed, an offset whose record came later
  // in the log stays, as it would after a reload.
  int64_t record_offset = -1;
};

using TopicPartition = std::pair<std::string, int32_t>;

struct Group {
  std::string id;
  int32_t partition = 0;  // of __consumer_offsets
  GroupState state = GroupState::empty;
  int32_t generation = 0;
  std::optional<std::string> protocol_type;
  std::optional<std::string> protocol_name;
  std::optional<std::string> leader_id;
  int64_t current_state_timestamp = -1;
  std::map<std::string, Member> members;
  std::map<std::string, std::string> static_members;  // group.instance.id -> member id
  std::set<std::string> pending_members;              // KIP-394: ids handed out, not yet joined
  std::map<TopicPartition, CommittedOffset> offsets;
  // TxnOffsetCommit's offsets, by producer id, until the transaction's
  // marker on the group's partition commits them into `offsets` or drops
  // them (Kafka's pendingTransactionalOffsets).
  std::map<int64_t, std::map<TopicPartition, CommittedOffset>> pending_txn_offsets;

  // The pending join (Kafka's DelayedJoin / InitialDelayedJoin), timed by
  // the coordinator's join-<group> timer.
  bool initial_delay = false;
  int32_t initial_remaining_ms = 0;
  bool new_member_added = false;

  // Members that have not sent SyncGroup since the join completed (Kafka's
  // pendingSyncMembers). Whoever is still pending when the sync-<group>
  // timer fires (the rebalance timeout after the join) is removed and the
  // group rebalances: a member that joined but never syncs cannot hold the
  // group forever.
  std::set<std::string> pending_sync;

  bool has(const std::string& member_id) const { return members.count(member_id) > 0; }
  // An open transaction holds an offset for the partition: OffsetFetch with
  // RequireStable answers UNSTABLE_OFFSET_COMMIT, and expiry leaves it.
  bool has_pending_txn_offset(const TopicPartition& tp) const;
  // Committed or pending offsets: a group holding some is kept when it
  // has no members.
  bool holds_offsets() const { return !offsets.empty() || !pending_txn_offsets.empty(); }
  // A tombstone for the partition: its committed offset and every pending one go.
  void erase_offset(const TopicPartition& tp);
  bool is_leader(const std::string& member_id) const { return leader_id && *leader_id == member_id; }
  // A static member known under another member id (KIP-345 fencing).
  bool is_static_member_fenced(const std::optional<std::string>& instance_id, const std::string& member_id) const;
  // Kafka's validateMember (Heartbeat, SyncGroup, LeaveGroup, OffsetCommit):
  // a request naming a group.instance.id must come from that instance's
  // current member id (UNKNOWN_MEMBER_ID when the instance is unknown,
  // FENCED_INSTANCE_ID when another member id holds it), and the member
  // must be in the group (UNKNOWN_MEMBER_ID).
  ErrorCode validate_member(const std::string& member_id, const std::optional<std::string>& instance_id) const;
  // Kafka's validateOffsetCommit, in its order: the member, then its
  // generation, then the rebalance state. Generation -1 on an Empty group is
  // a consumer that only stores offsets here (or the admin client). A
  // transactional commit (TxnOffsetCommit) without member, generation or
  // instance (v0-2, or a producer not given the group's metadata) is
  // accepted in any live state, and is not held back by a rebalance.
  ErrorCode validate_offset_commit(const std::string& member_id, const std::optional<std::string>& instance_id,
                                   int32_t generation_id, bool transactional = false) const;
  bool supports_protocols(const std::string& member_protocol_type, const std::vector<Protocol>& protocols) const;
  bool has_all_members_joined() const;
  size_t awaiting_join_count() const;
  int32_t max_rebalance_timeout_ms() const;
  // The protocol every member supports with the most first-preference votes.
  std::string select_protocol() const;
  // Topics the members subscribe to (consumer protocol metadata), if known.
  bool is_subscribed_to(const std::string& topic) const;
};

}  // namespace runnel::broker::group
