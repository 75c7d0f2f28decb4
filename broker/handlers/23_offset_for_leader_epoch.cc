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
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Result_ = p::OffsetForLeaderEpochResponse::OffsetForLeaderTopicResult::EpochEndOffset;
using Request_ = p::OffsetForLeaderEpochRequest::OffsetForLeaderTopic::OffsetForLeaderPartition;

Result_ end_offset(const TopicTable& topics, const std::string& topic, const Request_& rp) {
  Result_ r;
  r.partition = rp.partition;
  r.leader_epoch = -1;
  r.end_offset = -1;
  auto part = topics.partition(topic, rp.partition);
  if (!part) {
    r.error_code = p::code(ErrorCode::unknown_topic_or_partition);
    return r;
  }
  if (rp.current_leader_epoch >= 0 && rp.current_leader_epoch != part->leader_epoch()) {
    r.error_code = p::code(rp.current_leader_epoch > part->leader_epoch() ? ErrorCode::unknown_leader_epoch
                                                                           : ErrorCode::fenced_leader_epoch);
    return r;
  }
  auto [epoch, offset] = part->log().end_offset_for_epoch(rp.leader_epoch);
  r.leader_epoch = epoch;
  r.end_offset = offset;
  return r;
}

}  // namespace

template <>
awaitable<p::OffsetForLeaderEpochResponse> handle<p::OffsetForLeaderEpochApi>(RequestContext& ctx, p::OffsetForLeaderEpochRequest& req) {
  p::OffsetForLeaderEpochResponse resp;
  resp.topics.reserve(req.topics.size());
  for (const auto& t : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.topic = t.topic;
    for (const auto& rp : t.partitions) tr.partitions.push_back(end_offset(ctx.broker.topics(), t.topic, rp));
  }
  co_return resp;
}

}  // namespace runnel::broker
