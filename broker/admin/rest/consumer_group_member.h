// A REST consumer instance's membership of its classic consumer group, as
// REST Proxy's Java consumer (ClassicKafkaConsumer, range assignor) has it:
// JoinGroup (again with the member id a v4+ coordinator hands out first,
// KIP-394), the leader assigns every member's subscribed topics, SyncGroup,
// Heartbeat every heartbeat.interval.ms while the instance exists, commits
// with the generation, LeaveGroup when the instance goes. Requests go to
// the group's coordinator through broker_calls.h: this broker's handlers,
// or in a cluster the coordinator's over the inter-broker channel.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "broker/admin/rest/record_producer.h"
#include "protocol/consumer_protocol.h"
#include "protocol/error_codes.h"

namespace runnel::broker::admin::rest {

using TopicPartition = std::pair<std::string, int32_t>;

// The Java consumer's defaults.
struct MemberTimeouts {
  int32_t session_timeout_ms = 45'000;
  int32_t rebalance_timeout_ms = 300'000;  // max.poll.interval.ms
  std::chrono::milliseconds heartbeat_interval{3'000};
};

class ConsumerGroupMember {
 public:
  ConsumerGroupMember(Broker& broker, RestClient client, std::string group_id, MemberTimeouts timeouts = {});

  // Joins (or rejoins) with `topics` as the subscription, then syncs;
  // this member's assignment, or the error that stopped the join.
  awaitable<std::variant<protocol::Assignment, protocol::ErrorCode>> join(const std::vector<std::string>& topics);
  // One Heartbeat: NONE, or REBALANCE_IN_PROGRESS / UNKNOWN_MEMBER_ID /
  // ILLEGAL_GENERATION / FENCED_INSTANCE_ID (join again), or another error.
  awaitable<protocol::ErrorCode> heartbeat();
  // Leaves the group; a join in flight then ends with UNKNOWN_MEMBER_ID.
  awaitable<void> leave();

  // Commits at the coordinator with this member's generation (or, outside
  // the group, generation -1 as a simple consumer does); the first error.
  awaitable<protocol::ErrorCode> commit(const std::map<TopicPartition, int64_t>& offsets);
  // Committed offsets of `partitions` (absent: none committed), or the error.
  awaitable<std::variant<std::map<TopicPartition, std::pair<int64_t, std::string>>, protocol::ErrorCode>> committed(
      const std::vector<TopicPartition>& partitions);

  bool is_member() const { return generation_ >= 0; }
  const std::string& group_id() const { return group_id_; }
  const MemberTimeouts& timeouts() const { return timeouts_; }

 private:
  // The broker that coordinates the group: FindCoordinator's answer, kept
  // until a request says it moved.
  awaitable<std::variant<int32_t, protocol::ErrorCode>> coordinator();
  void forget_coordinator(protocol::ErrorCode error);
  template <typename Api>
  awaitable<std::optional<typename Api::Response>> at_coordinator(const typename Api::Request& req, int16_t version);

  Broker& broker_;
  RestClient client_;
  std::string group_id_;
  MemberTimeouts timeouts_;
  std::optional<int32_t> coordinator_;
  std::string member_id_;
  int32_t generation_ = -1;
  uint64_t leaves_ = 0;  // leave() calls: a join that sees this move stops
};

// Whether a group request's error asks the member to find the coordinator again.
bool coordinator_moved(protocol::ErrorCode e);

}  // namespace runnel::broker::admin::rest
