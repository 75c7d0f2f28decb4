// ListOffsets (key 2): the offset for a timestamp, or for one of the special
// timestamps: -2 earliest, -1 latest (the high watermark; the last stable
// offset for read_committed, the same while Runnel has no transactions),
// -3 the record with the largest timestamp (v7+), -4 earliest local (v8+,
// the earliest offset: Runnel has no tiered storage), -5 earliest pending
// upload (v9+, none: -1).
#include <set>

#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {
using p::ErrorCode;
constexpr int64_t kEarliestPendingUpload = -5;
}  // namespace

template <>
awaitable<p::ListOffsetsResponse> handle<p::ListOffsetsApi>(RequestContext& ctx, p::ListOffsetsRequest& req) {
  Broker& b = ctx.broker;
  p::ListOffsetsResponse resp;
  for (auto& rt : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.name = rt.name;
    std::set<int32_t> seen;
    for (auto& rp : rt.partitions) {
      auto& pr = tr.partitions.emplace_back();
      pr.partition_index = rp.partition_index;
      if (!seen.insert(rp.partition_index).second) {
        pr.error_code = p::code(ErrorCode::invalid_request);  // Kafka refuses duplicate partitions
        continue;
      }
      auto part = b.topics().partition(rt.name, rp.partition_index);
      if (!part) {
        pr.error_code = p::code(ErrorCode::unknown_topic_or_partition);
        continue;
      }
      if (rp.current_leader_epoch >= 0 && rp.current_leader_epoch != part->leader_epoch()) {
        pr.error_code = p::code(rp.current_leader_epoch > part->leader_epoch() ? ErrorCode::unknown_leader_epoch
                                                                                : ErrorCode::fenced_leader_epoch);
        continue;
      }
      if (rp.timestamp == kEarliestPendingUpload) continue;  // nothing is uploaded: offset -1
      int64_t ts = rp.timestamp == storage::Log::kEarliestLocalTimestamp ? storage::Log::kEarliestTimestamp : rp.timestamp;
      auto found = part->log().offset_for_timestamp(ts);
      if (!found) {
        pr.error_code = p::code(ErrorCode::kafka_storage_error);
        continue;
      }
      if (*found) {
        pr.timestamp = (*found)->timestamp;
        pr.offset = (*found)->offset;
        pr.leader_epoch = (*found)->leader_epoch;
      }
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
