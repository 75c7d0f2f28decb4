// A classic consumer-group member for one topic (the Java consumer's
// ClassicKafkaConsumer with the range assignor): JoinGroup (twice on a
// broker that hands out member ids first, KIP-394), the leader computes
// the assignment, SyncGroup, then Heartbeat every heartbeat.interval.ms
// until the group rebalances; offsets are committed at the coordinator and
// the member leaves the group when it stops.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/cluster.h"
#include "cli/group_offsets.h"

namespace runnel::cli {

struct GroupOptions {
  std::chrono::milliseconds session_timeout{45000};
  std::chrono::milliseconds rebalance_timeout{300000};  // max.poll.interval.ms
  std::chrono::milliseconds heartbeat_interval{3000};
};

class GroupMember {
 public:
  GroupMember(Cluster& cluster, std::string group_id, std::string topic, GroupOptions options);

  // Joins (or rejoins) the group; returns this member's partitions of the topic.
  std::vector<int32_t> join();
  // Heartbeats if one is due; false when the group is rebalancing (join again).
  bool heartbeat_if_due();
  void commit(const std::map<int32_t, int64_t>& positions);
  // LeaveGroup, so the others rebalance now rather than after the session timeout.
  void leave();

  const GenerationInfo& generation() const { return generation_; }

 private:
  Cluster& cluster_;
  std::string group_id_;
  std::string topic_;
  GroupOptions options_;
  GenerationInfo generation_;
  std::chrono::steady_clock::time_point last_heartbeat_;
};

}  // namespace runnel::cli
