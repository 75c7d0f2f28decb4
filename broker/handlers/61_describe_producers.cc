// DescribeProducers (key 61, KIP-664): the producers a partition's leader
// keeps state for, as `kafka-transactions.sh describe-producers` lists them:
// each one's epoch, last sequence and timestamp, coordinator epoch and the
// first offset of its open transaction (-1: none), the first of which is
// what holds a stuck last stable offset back. As Kafka's
// handleDescribeProducersRequest: READ on the topic, else
// TOPIC_AUTHORIZATION_FAILED; then Partition.activeProducerState, which
// only the leader answers (NOT_LEADER_OR_FOLLOWER elsewhere).
#include <algorithm>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using PartitionResponse_ = p::DescribeProducersResponse::TopicResponse::PartitionResponse;

void describe(const replication::ReplicaManager& replicas, const std::string& topic, PartitionResponse_& out) {
  auto part = replicas.get_partition(topic, PartitionId(out.partition_index));
  if (!part) {
    out.error_code = p::code(replicas.missing_partition_error(topic, PartitionId(out.partition_index)));
    return;
  }
  const ErrorCode error = part->check_local_log(std::nullopt, /*require_leader=*/true);
  if (error != ErrorCode::none) {
    out.error_code = p::code(error);
    return;
  }
  for (const auto& [id, entry] : part->producers().entries()) {
    auto& state = out.active_producers.emplace_back();
    state.producer_id = id;
    state.producer_epoch = entry.epoch;
    state.last_sequence = entry.batches.empty() ? -1 : entry.batches.back().last_seq;
    state.last_timestamp = entry.last_timestamp;
    state.coordinator_epoch = entry.coordinator_epoch;
    state.current_txn_start_offset = entry.current_txn_first_offset;
  }
  // The table is unordered; an answer in producer id order reads the same every time.
  std::sort(out.active_producers.begin(), out.active_producers.end(),
            [](const auto& a, const auto& b) { return a.producer_id < b.producer_id; });
}

}  // namespace

template <>
awaitable<p::DescribeProducersResponse> handle<p::DescribeProducersApi>(RequestContext& ctx,
                                                                         p::DescribeProducersRequest& req) {
  p::DescribeProducersResponse resp;
  for (const auto& t : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.name = t.name;
    const bool allowed = authorized(ctx, AclOperation::read, ResourceType::topic, t.name);
    for (int32_t index : t.partition_indexes) {
      auto& pr = tr.partitions.emplace_back();
      pr.partition_index = index;
      if (!allowed) {
        pr.error_code = p::code(ErrorCode::topic_authorization_failed);
        continue;
      }
      describe(ctx.broker.replica_manager(), t.name, pr);
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
