// DeleteRecords (key 21): moves partitions' log start offsets forward to
// the requested offsets (-1: the high watermark) and deletes the segments
// wholly below them. v1 changes only quotas, v2 is flexible.
//
// As Kafka's ReplicaManager: an unknown partition is
// UNKNOWN_TOPIC_OR_PARTITION; an offset above the high watermark (or below
// -1) OFFSET_OUT_OF_RANGE; a topic whose cleanup.policy lacks "delete"
// POLICY_VIOLATION; an internal topic INVALID_TOPIC_EXCEPTION. Failed
// partitions report low watermark -1. Then, as Kafka's DelayedDeleteRecords
// (replication/delayed_delete_records.h), the answer waits up to TimeoutMs
// for the low watermark -- the smallest log start offset of the live
// replicas, as the followers' fetches report theirs -- to reach the
// requested offset. With one replica the low watermark is the leader's log
// start offset at once, so the request never waits.
#include <algorithm>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/config_admin.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using PartitionResult_ = p::DeleteRecordsResponse::DeleteRecordsTopicResult::DeleteRecordsPartitionResult;

constexpr int64_t kInvalidLowWatermark = -1;

struct Deletion {
  std::shared_ptr<storage::Log> log;
  int64_t offset = 0;  // -1 already made the high watermark
  PartitionResult_* out = nullptr;
};

struct Outcome {
  int64_t low_watermark = kInvalidLowWatermark;
  ErrorCode error = ErrorCode::none;
};

// Runs on the blocking pool: deleting segments touches the disk.
std::vector<Outcome> delete_all(const std::vector<Deletion>& work) {
  std::vector<Outcome> out;
  for (const auto& d : work) {
    auto r = d.log->delete_records(d.offset);
    if (r) {
      out.push_back({*r, ErrorCode::none});
    } else {
      bool range = r.error() == storage::StorageErrc::offset_out_of_range;
      if (!range) RLOG_ERROR("delete records in %s: %s", d.log->dir().c_str(), r.error().message().c_str());
      out.push_back({kInvalidLowWatermark, range ? ErrorCode::offset_out_of_range : ErrorCode::kafka_storage_error});
    }
  }
  return out;
}

auto delete_on_pool(Broker& b, std::vector<Deletion> work) {
  return b.run_blocking([work = std::move(work)] { return delete_all(work); });
}

bool policy_allows_delete(const Topic& t) { return t.config.log.cleanup_delete; }

// Kafka's metadataCache.hasAliveBroker, asked of the image current at each check.
replication::IsLiveBroker live_brokers(const Broker& b) {
  return [&cache = b.metadata_cache()](NodeId node) { return cache->is_live(node); };
}

}  // namespace

template <>
awaitable<p::DeleteRecordsResponse> handle<p::DeleteRecordsApi>(RequestContext& ctx, p::DeleteRecordsRequest& req) {
  Broker& b = ctx.broker;
  p::DeleteRecordsResponse resp;
  std::vector<Deletion> work;
  std::vector<replication::DeleteRecordsEntry> entries;  // work's partitions, in the same order
  resp.topics.reserve(req.topics.size());
  for (const auto& rt : req.topics) {
    auto& tr = resp.topics.emplace_back();
    tr.name = rt.name;
    tr.partitions.reserve(rt.partitions.size());
    auto topic = b.topics().find(rt.name);
    // Kafka: DELETE on the topic, before its existence.
    const bool may_delete = authorized(ctx, AclOperation::delete_, ResourceType::topic, rt.name);
    for (const auto& rp : rt.partitions) {
      auto& pr = tr.partitions.emplace_back();
      pr.partition_index = rp.partition_index;
      pr.low_watermark = kInvalidLowWatermark;
      if (!may_delete) {
        pr.error_code = p::code(ErrorCode::topic_authorization_failed);
        continue;
      }
      auto part = topic ? b.replica_manager().get_partition(rt.name, PartitionId(rp.partition_index)) : nullptr;
      ErrorCode local = part ? part->check_local_log(std::nullopt, /*require_leader=*/true) : ErrorCode::none;
      if (!topic || !part) {
        pr.error_code = p::code(b.replica_manager().missing_partition_error(rt.name, PartitionId(rp.partition_index)));
      } else if (local != ErrorCode::none) {
        pr.error_code = p::code(local);  // Kafka's deleteRecordsOnLeader: only the leader deletes
      } else if (topic->internal) {
        pr.error_code = p::code(ErrorCode::invalid_topic_exception);
      } else if (!policy_allows_delete(*topic)) {
        pr.error_code = p::code(ErrorCode::policy_violation);
      } else if (rp.offset < -1) {
        pr.error_code = p::code(ErrorCode::offset_out_of_range);
      } else {
        // Kafka's deleteRecordsOnLeader: -1 is the high watermark now, and
        // that is the offset the replicas' log starts must reach.
        const int64_t offset = rp.offset == -1 ? part->high_watermark().value() : rp.offset;
        work.push_back({part->log_ptr(), offset, &pr});
        entries.push_back({std::move(part), Offset(offset)});
      }
    }
  }
  if (work.empty()) co_return resp;
  std::vector<PartitionResult_*> slots;
  for (const auto& d : work) slots.push_back(d.out);
  auto outcomes = co_await delete_on_pool(b, std::move(work));
  for (size_t i = 0; i < entries.size() && i < outcomes.size(); ++i) {
    entries[i].low_watermark = Offset(outcomes[i].low_watermark);
    entries[i].error = outcomes[i].error;
  }
  replication::IsLiveBroker is_live = live_brokers(b);
  co_await b.replica_manager().delete_records(std::chrono::milliseconds(std::max(0, req.timeout_ms)), entries,
                                              std::move(is_live));
  for (size_t i = 0; i < slots.size() && i < entries.size(); ++i) {
    slots[i]->low_watermark = entries[i].low_watermark.value();
    slots[i]->error_code = p::code(entries[i].error);
  }
  co_return resp;
}

}  // namespace runnel::broker
