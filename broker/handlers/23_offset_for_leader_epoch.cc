// OffsetForLeaderEpoch (key 23, KIP-101/KIP-320): for each partition, the
// largest leader epoch not above the requested one and the offset where it
// ends, from the leader epoch cache. Followers use it to truncate, consumers
// to detect log truncation after a leader change. Kafka 4.x serves v2+;
// v2 adds CurrentLeaderEpoch (fencing) and throttling, v3 ReplicaId, v4 is
// flexible.
//
// A CurrentLeaderEpoch other than -1 is checked against the partition's
// epoch as Fetch does: older is FENCED_LEADER_EPOCH, newer
// UNKNOWN_LEADER_EPOCH. An epoch the cache cannot place gives epoch -1 and
// end offset -1 without an error, as Kafka answers. Every replica id is
// served alike: this node leads every partition.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Result_ = p::OffsetForLeaderEpochResponse::OffsetForLeaderTopicResult::EpochEndOffset;
using Request_ = p::OffsetForLeaderEpochRequest::OffsetForLeaderTopic::OffsetForLeaderPartition;

constexpr int32_t kDebuggingReplicaId = -2;

Result_ end_offset(const replication::ReplicaManager& replicas, const std::string& topic, const Request_& rp,
                   int32_t replica_id) {
  Result_ r;
  r.partition = rp.partition;
  r.leader_epoch = -1;
  r.end_offset = -1;
  auto part = replicas.get_partition(topic, PartitionId(rp.partition));
  if (!part) {
    r.error_code = p::code(replicas.missing_partition_error(topic, PartitionId(rp.partition)));
    return r;
  }
  // Kafka: -1 is no epoch (RecordBatch.NO_PARTITION_LEADER_EPOCH); only a
  // debugging tool may ask a follower.
  std::optional<LeaderEpoch> current;
  if (rp.current_leader_epoch != -1) current = LeaderEpoch(rp.current_leader_epoch);
  auto found = part->last_offset_for_leader_epoch(current, LeaderEpoch(rp.leader_epoch),
                                                  /*require_leader=*/replica_id != kDebuggingReplicaId);
  r.error_code = p::code(found.error);
  r.leader_epoch = found.leader_epoch.value();
  r.end_offset = found.end_offset.value();
  return r;
}

}  // namespace

template <>
awaitable<p::OffsetForLeaderEpochResponse> handle<p::OffsetForLeaderEpochApi>(RequestContext& ctx, p::OffsetForLeaderEpochRequest& req) {
  p::OffsetForLeaderEpochResponse resp;
  resp.topics.reserve(req.topics.size());
  // Kafka: CLUSTER_ACTION on the cluster (a follower) covers every topic,
  // else each needs DESCRIBE (TOPIC_AUTHORIZATION_FAILED).
  const bool cluster_action = authorized_on_cluster(ctx, AclOperation::cluster_action);
  for (const auto& t : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.topic = t.topic;
    const bool allowed = cluster_action || authorized(ctx, AclOperation::describe, ResourceType::topic, t.topic);
    for (const auto& rp : t.partitions) {
      if (allowed) {
        tr.partitions.push_back(end_offset(ctx.broker.replica_manager(), t.topic, rp, req.replica_id));
        continue;
      }
      auto& r = tr.partitions.emplace_back();
      r.partition = rp.partition;
      r.leader_epoch = -1;
      r.end_offset = -1;
      r.error_code = p::code(ErrorCode::topic_authorization_failed);
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
