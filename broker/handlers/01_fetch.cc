// Fetch (key 1): whole record batches from each partition, sent straight
// from the segment files with sendfile(2).
//
// Long poll: while fewer than MinBytes are ready the request waits, up to
// MaxWaitMs, for an append to any partition it asks for. Limits: at most
// PartitionMaxBytes per partition and MaxBytes in all, except that the first
// partition with data always returns at least one whole batch, so a batch
// larger than the limits can still be consumed (KIP-74).
// Fetch sessions (KIP-227) are not kept: every response carries session id
// 0, which tells clients to send full fetches; they all support that.
// v13+ names topics by id.
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using TopicResponse = p::FetchResponse::FetchableTopicResponse;
using PartitionData = TopicResponse::PartitionData;

struct Target {
  std::shared_ptr<Partition> partition;
  PartitionData* out = nullptr;
  int64_t fetch_offset = 0;
  int32_t max_bytes = 0;
};

// Reads every target into its response slot; returns the bytes found.
int64_t read_all(std::vector<Target>& targets, int32_t response_max_bytes) {
  int64_t total = 0;
  for (auto& t : targets) {
    if (!t.partition) continue;
    storage::Log& log = t.partition->log();
    int64_t budget = std::min<int64_t>(t.max_bytes, std::max<int64_t>(0, response_max_bytes - total));
    auto read = log.read(t.fetch_offset, budget, std::nullopt, /*min_one_batch=*/total == 0);
    t.out->high_watermark = log.high_watermark();
    t.out->last_stable_offset = log.high_watermark();
    t.out->log_start_offset = log.log_start_offset();
    if (!read) {
      bool out_of_range = read.error() == storage::StorageErrc::offset_out_of_range;
      t.out->error_code = p::code(out_of_range ? ErrorCode::offset_out_of_range : ErrorCode::kafka_storage_error);
      t.out->records = p::Records::view({});
      continue;
    }
    t.out->error_code = 0;
    if (read->records.length > 0) {
      t.out->records = p::Records::file(read->records);
      total += read->records.length;
    } else {
      t.out->records = p::Records::view({});
    }
  }
  return total;
}

}  // namespace

awaitable<p::FetchResponse> handle_fetch(RequestContext& ctx, p::FetchRequest& req) {
  Broker& b = ctx.broker;
  const int16_t v = ctx.api_version();
  p::FetchResponse resp;
  resp.session_id = 0;
  if (req.session_id != 0) {
    // We never hand out a session, so the client cannot know one.
    resp.error_code = p::code(ErrorCode::fetch_session_id_not_found);
    co_return resp;
  }

  std::vector<Target> targets;
  size_t total_partitions = 0;
  for (auto& ft : req.topics) total_partitions += ft.partitions.size();
  targets.reserve(total_partitions);
  resp.responses.reserve(req.topics.size());
  for (auto& ft : req.topics) {
    auto& tr = resp.responses.emplace_back();
    std::shared_ptr<Topic> topic = v >= 13 ? b.topics().find(ft.topic_id) : b.topics().find(ft.topic);
    tr.topic = ft.topic;
    tr.topic_id = ft.topic_id;
    tr.partitions.reserve(ft.partitions.size());
    for (auto& fp : ft.partitions) {
      auto& pd = tr.partitions.emplace_back();
      pd.partition_index = fp.partition;
      pd.high_watermark = -1;
      pd.records = p::Records::view({});
      if (req.isolation_level == 0) pd.aborted_transactions = std::nullopt;
      std::shared_ptr<Partition> part =
          topic && fp.partition >= 0 && fp.partition < static_cast<int32_t>(topic->partitions.size())
              ? topic->partitions[static_cast<size_t>(fp.partition)]
              : nullptr;
      if (!part) {
        pd.error_code = p::code(v >= 13 && !topic ? ErrorCode::unknown_topic_id : ErrorCode::unknown_topic_or_partition);
        continue;
      }
      if (fp.current_leader_epoch >= 0 && fp.current_leader_epoch != part->leader_epoch()) {
        pd.error_code = p::code(fp.current_leader_epoch > part->leader_epoch() ? ErrorCode::unknown_leader_epoch
                                                                                : ErrorCode::fenced_leader_epoch);
        continue;
      }
      targets.push_back({part, &pd, fp.fetch_offset, fp.partition_max_bytes});
    }
  }

  int64_t bytes = read_all(targets, req.max_bytes);
  if (bytes < req.min_bytes && req.max_wait_ms > 0 && !targets.empty()) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(req.max_wait_ms);
    auto timer = std::make_shared<asio::steady_timer>(b.io());
    while (bytes < req.min_bytes && std::chrono::steady_clock::now() < deadline && !b.stopping()) {
      timer->expires_at(deadline);
      for (auto& t : targets)
        if (t.partition) t.partition->data_signal().add_waiter(timer);
      co_await timer->async_wait(as_tuple_awaitable);
      bytes = read_all(targets, req.max_bytes);
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
