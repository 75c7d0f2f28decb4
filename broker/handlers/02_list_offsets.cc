// ListOffsets (key 2): the offset for a timestamp, or for one of the special
// timestamps: -2 earliest, -1 latest (the high watermark; the last stable
// offset for read_committed, the same while Runnel has no transactions),
// -3 the record with the largest timestamp (v7+), -4 earliest local (v8+,
// the earliest offset: Runnel has no tiered storage), -5 earliest pending
// upload (v9+, none: -1).
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
constexpr int32_t kConsumerReplicaId = -1;
constexpr int32_t kDebuggingReplicaId = -2;

// Kafka's handleListOffsetRequest: a consumer reads up to its isolation
// level's bound, a replica (or a debugging tool) to the log end.
replication::FetchIsolation isolation(const p::ListOffsetsRequest& req) {
  if (req.replica_id != kConsumerReplicaId) return replication::FetchIsolation::log_end;
  return req.isolation_level == 1 ? replication::FetchIsolation::txn_committed
                                  : replication::FetchIsolation::high_watermark;
}

// A partition this broker leads but has not opened yet is waited for, as
// Produce does (HostedPartitions::leads_unopened), within the bound.
bool leads_unopened(Broker& b, const p::ListOffsetsRequest& req) {
  if (!b.hosted_partitions()) return false;
  for (const auto& topic : req.topics)
    for (const auto& rp : topic.partitions)
      if (b.hosted_partitions()->leads_unopened(topic.name, PartitionId(rp.partition_index))) return true;
  return false;
}

}  // namespace

template <>
awaitable<p::ListOffsetsResponse> handle<p::ListOffsetsApi>(RequestContext& ctx, p::ListOffsetsRequest& req) {
  Broker& b = ctx.broker;
  if (leads_unopened(b, req)) co_await b.hosted_partitions()->wait_caught_up(HostedPartitions::kOpeningWaitBound);
  p::ListOffsetsResponse resp;
  for (auto& rt : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.name = rt.name;
    std::set<int32_t> seen;
    // Kafka: DESCRIBE on the topic, checked before anything else.
    const bool may_describe = authorized(ctx, AclOperation::describe, ResourceType::topic, rt.name);
    for (auto& rp : rt.partitions) {
      auto& pr = tr.partitions.emplace_back();
      pr.partition_index = rp.partition_index;
      if (!may_describe) {
        pr.error_code = p::code(ErrorCode::topic_authorization_failed);
        continue;
      }
      if (!seen.insert(rp.partition_index).second) {
        pr.error_code = p::code(ErrorCode::invalid_request);  // Kafka refuses duplicate partitions
        continue;
      }
      auto part = b.replica_manager().get_partition(rt.name, PartitionId(rp.partition_index));
      if (!part) {
        pr.error_code = p::code(b.replica_manager().missing_partition_error(rt.name, PartitionId(rp.partition_index)));
        continue;
      }
      // Kafka: -1 is no epoch (ListOffsetsResponse.UNKNOWN_EPOCH).
      std::optional<LeaderEpoch> epoch;
      if (rp.current_leader_epoch != -1) epoch = LeaderEpoch(rp.current_leader_epoch);
      auto found = part->fetch_offset_for_timestamp(rp.timestamp, isolation(req), epoch,
                                                    /*require_leader=*/req.replica_id != kDebuggingReplicaId);
      pr.error_code = p::code(found.error);
      if (found.found) {
        pr.timestamp = found.found->timestamp;
        pr.offset = found.found->offset;
        pr.leader_epoch = found.found->leader_epoch;
      }
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
