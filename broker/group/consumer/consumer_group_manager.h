// The KIP-848 consumer group coordinator (the consumer-group part of Kafka's
// GroupMetadataManager): ConsumerGroupHeartbeat joins, leaves and
// reconciles members; the group epoch moves when membership, a
// subscription or a subscribed topic's partitions change; the target
// assignment is recomputed by the server-side assignor when the group epoch
// passes it; each member converges to its target through
// current_assignment_builder.h; members that stop heartbeating (session
// timeout) or do not revoke in time (rebalance timeout) are fenced.
//
// Every change is a set of __consumer_offsets records
// (consumer_group_records.h) written through the OffsetsStore and, once
// stored, replayed into memory: the groups are exactly what a load of the
// log would build. A group's heartbeats and timeouts run one at a time, so
// each sees the state the previous one wrote.
//
// Single-threaded and driven like the classic manager: on the coordinator's
// thread, with deadlines through its CoordinatorTimer.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "broker/group/consumer/consumer_group.h"
#include "broker/group/consumer/consumer_group_config.h"
#include "broker/group/consumer/partition_assignor.h"
#include "broker/group/consumer/topics_image.h"
#include "broker/group/coordinator_timer.h"
#include "broker/group/offsets_store.h"
#include "protocol/error_codes.h"

namespace re2 {
class RE2;
}

namespace runnel::broker::group::consumer {

using protocol::ErrorCode;

inline constexpr int32_t kLeaveGroupMemberEpoch = -1;
inline constexpr int32_t kLeaveGroupStaticMemberEpoch = -2;

struct ConsumerHeartbeat {
  int16_t api_version = 1;
  std::string group_id;
  std::string member_id;
  int32_t member_epoch = 0;
  std::optional<std::string> instance_id;
  std::optional<std::string> rack_id;
  int32_t rebalance_timeout_ms = -1;
  std::optional<std::vector<std::string>> subscribed_topic_names;  // null: unchanged
  std::optional<std::string> subscribed_topic_regex;               // null: unchanged, "": none
  std::optional<std::string> server_assignor;                      // null: unchanged
  std::optional<Assignment> owned;                                 // TopicPartitions; null: unchanged
  std::string client_id;
  std::string client_host;
};

struct ConsumerHeartbeatResult {
  ErrorCode error = ErrorCode::none;
  std::optional<std::string> error_message;
  std::string member_id;
  int32_t member_epoch = 0;
  int32_t heartbeat_interval_ms = 0;
  std::optional<Assignment> assignment;  // null: unchanged since the last answer
};

using HeartbeatDone = std::function<void(ConsumerHeartbeatResult)>;

class ConsumerGroupManager {
 public:
  // `partition_for` maps a group to its __consumer_offsets partition;
  // `is_classic_group` says whether a classic group holds the id (a
  // consumer group may not take it); `serves` whether this coordinator
  // serves a partition now (owned, loaded): a heartbeat that waited its
  // turn past an unload answers NOT_COORDINATOR.
  ConsumerGroupManager(const ConsumerGroupConfig& config, OffsetsStore& store, const Clock& clock,
                       CoordinatorTimer& timer, const TopicsImage& topics,
                       std::function<int32_t(const std::string&)> partition_for,
                       std::function<bool(const std::string&)> is_classic_group,
                       std::function<bool(int32_t)> serves = [](int32_t) { return true; });
  ~ConsumerGroupManager();

  // ConsumerGroupHeartbeat; `done` runs once, when what it changed is stored.
  void heartbeat(ConsumerHeartbeat req, HeartbeatDone done);

  // DeleteGroups of an empty consumer group: its records' tombstones
  // (Kafka's createGroupTombstoneRecords); NON_EMPTY_GROUP while it has
  // members, GROUP_ID_NOT_FOUND for none. `done` runs once they are stored.
  void delete_group(const std::string& group_id, std::function<void(ErrorCode)> done);

  // A consumer group record of __consumer_offsets, in log order while
  // loading (and after each of this manager's writes). False if it does
  // not decode.
  bool replay(protocol::ByteView key, const std::optional<protocol::ByteView>& value);
  // The groups of the partitions `which` selects finished loading: their
  // members' sessions start now, as Kafka's do on load.
  void loaded(const std::function<bool(int32_t)>& which);
  // The groups of the partitions `which` selects leave memory, their timers
  // cancelled; writes in flight for them are not applied.
  void unload(const std::function<bool(int32_t)>& which);

  const ConsumerGroup* find(const std::string& group_id) const;
  // The assignor the group's target is computed with (ConsumerGroupDescribe's AssignorName).
  std::string_view assignor_name(const ConsumerGroup& g) const;
  template <typename F>
  void for_each_group(F&& f) const {
    for (const auto& [_, g] : groups_) f(g);
  }

 private:
  struct Resolved;  // a subscription resolved against the topics image

  void run_exclusive(const std::string& group_id, std::function<void()> op);
  void finish(const std::string& group_id);
  void drain(const std::string& group_id);
  void join_or_heartbeat(const ConsumerHeartbeat& req, HeartbeatDone done);
  void leave(const ConsumerHeartbeat& req, HeartbeatDone done);
  // Fences the member (session or rebalance timeout): its records go, the
  // group epoch moves on.
  void fence(const std::string& group_id, const std::string& member_id, std::function<void()> done);
  std::vector<OffsetsRecord> removal_records(const ConsumerGroup& g, const std::string& member_id) const;
  // Writes the records and replays them; `then` gets the write's answer.
  void write(const std::string& group_id, std::vector<OffsetsRecord> records, std::function<void(ErrorCode)> then);
  void schedule_session(const std::string& group_id, const std::string& member_id);
  void schedule_rebalance_timeout(const std::string& group_id, const ConsumerGroupMember& m);
  void cancel_timers(const std::string& group_id, const std::string& member_id);

  Resolved resolve(const ConsumerGroupMember& m) const;
  const re2::RE2* regex(const std::string& pattern) const;
  const PartitionAssignor& assignor_for(const std::map<std::string, const ConsumerGroupMember*>& members) const;

  const ConsumerGroupConfig& config_;
  OffsetsStore& store_;
  const Clock& clock_;
  CoordinatorTimer& timer_;
  const TopicsImage& topics_;
  std::function<int32_t(const std::string&)> partition_for_;
  std::function<bool(const std::string&)> is_classic_group_;
  std::function<bool(int32_t)> serves_;
  std::vector<std::unique_ptr<PartitionAssignor>> assignors_;  // config_.assignors' order

  std::map<std::string, ConsumerGroup> groups_;
  // Each group's subscribed topics and their partition counts when its
  // target was last computed; a change moves the group epoch.
  std::map<std::string, std::map<TopicId, int32_t>> subscribed_partitions_;
  // A group's operations, one running at a time, the others waiting.
  struct Queue {
    std::deque<std::function<void()>> ops;
    bool running = false;   // one started and not yet finished
    bool draining = false;  // drain() is on the stack for this group
  };
  std::map<std::string, Queue> queues_;
  // Each member's session deadline, by timer key: a fence that waited its
  // turn behind the member's heartbeat finds it moved and does nothing.
  std::map<std::string, int64_t> session_deadlines_;
  uint64_t unloads_ = 0;  // a write that sees this move was overtaken by an unload
  mutable std::map<std::string, std::unique_ptr<re2::RE2>> regexes_;
};

}  // namespace runnel::broker::group::consumer
