// Produce (key 0): validates and appends one record batch per partition.
//
// v0-2 stay in the advertised range only for librdkafka 2.0.2's compression
// check (KAFKA-18659) and are refused with UNSUPPORTED_VERSION, as Kafka 4
// does. acks=0 gets no response (and an error closes the connection);
// acks=-1 is acknowledged once the append is fsynced when
// runnel.acks.all.fsync is true (Runnel's default), with concurrent
// producers sharing fsyncs (storage/group_commit.h). A request holding a
// transactional batch, or naming a transactional id, is answered
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition, as Kafka answers
// it when the id is missing or not authorized: Runnel has no transactions
// yet, so no producer can hold an authorized transactional id.
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "broker/produce_validation.h"
#include "protocol/error_codes.h"
#include "protocol/records/batch_format.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using PartitionResponse = p::ProduceResponse::TopicProduceResponse::PartitionProduceResponse;

PartitionResponse error_response(int32_t index, ErrorCode code, std::string message = {}) {
  PartitionResponse r;
  r.index = index;
  r.error_code = p::code(code);
  r.base_offset = -1;
  if (!message.empty()) r.error_message = std::move(message);
  return r;
}

// KIP-467: each refused record by its index in the batch. A rule broken by
// the batch as a whole names its first record, as Runnel always has.
void record_errors(const protocol::records::BatchStatus& status, PartitionResponse& r) {
  for (const auto& e : status.record_errors) r.record_errors.push_back({e.batch_index, e.message, {}});
  if (status.record_errors.empty() && status.code == ErrorCode::invalid_record)
    r.record_errors.push_back({0, status.message, {}});
}

using BatchHeaders = std::vector<std::optional<protocol::records::BatchHeader>>;

// Each partition's batch header, in request order, read once: the
// transactional check, the validation and the append all use it.
BatchHeaders read_headers(const p::ProduceRequest& req) {
  BatchHeaders out;
  for (const auto& topic : req.topic_data)
    for (const auto& pd : topic.partition_data)
      out.push_back(pd.records.is_null() ? std::nullopt : protocol::records::read_batch_header(pd.records.bytes()));
  return out;
}

// Kafka's ProduceRequest.hasTransactionalRecords: the first batch of some
// partition is transactional.
bool has_transactional_records(const BatchHeaders& headers) {
  for (const auto& h : headers)
    if (h && h->is_transactional()) return true;
  return false;
}

// A plain function, not a coroutine: GCC 12 mishandles lambdas that capture
// a coroutine's by-value parameters (the capture aliases the parameter).
std::function<std::error_code()> sync_all(const std::vector<std::shared_ptr<storage::Log>>& logs) {
  return [logs] {
    for (auto& log : logs)
      if (auto e = log->sync()) return e;
    return std::error_code{};
  };
}

// Makes the acks=all appends durable before their response leaves.
awaitable<bool> sync_logs(Broker& broker, std::vector<std::shared_ptr<storage::Log>> logs) {
  std::error_code ec = co_await broker.run_blocking(sync_all(logs));
  if (ec) RLOG_ERROR("fsync for acks=all failed: %s; closing the connection unacknowledged", ec.message().c_str());
  co_return !ec;
}

}  // namespace

template <>
awaitable<p::ProduceResponse> handle<p::ProduceApi>(RequestContext& ctx, p::ProduceRequest& req) {
  Broker& b = ctx.broker;
  const int16_t v = ctx.api_version();
  p::ProduceResponse resp;
  const BatchHeaders headers = read_headers(req);
  ErrorCode request_error = ErrorCode::none;
  if (v < 3) request_error = ErrorCode::unsupported_version;
  else if (req.transactional_id || has_transactional_records(headers))
    request_error = ErrorCode::transactional_id_authorization_failed;
  else if (req.acks != 0 && req.acks != 1 && req.acks != -1) request_error = ErrorCode::invalid_required_acks;

  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch()).count();
  std::vector<std::shared_ptr<storage::Log>> to_sync;
  bool any_error = false;
  auto next_header = headers.begin();
  for (auto& topic : req.topic_data) {
    auto& tr = resp.responses.emplace_back();
    tr.name = topic.name;
    auto t = b.topics().find(topic.name);
    for (auto& pd : topic.partition_data) {
      const auto& received = *next_header++;
      if (request_error != ErrorCode::none) {
        tr.partition_responses.push_back(error_response(pd.index, request_error));
        any_error = true;
        continue;
      }
      std::shared_ptr<Partition> part = t ? b.topics().partition(topic.name, pd.index) : nullptr;
      if (!part) {
        tr.partition_responses.push_back(error_response(pd.index, ErrorCode::unknown_topic_or_partition));
        any_error = true;
        continue;
      }
      if (req.acks == -1) {
        const int32_t min_isr = t->config.min_insync_replicas;
        if (static_cast<int32_t>(part->isr().size()) < min_isr) {
          tr.partition_responses.push_back(error_response(
              pd.index, ErrorCode::not_enough_replicas,
              "The size of the current ISR " + std::to_string(part->isr().size()) +
                  " is insufficient to satisfy the min.isr requirement of " + std::to_string(min_isr)));
          any_error = true;
          continue;
        }
      }
      PreparedBatch batch = prepare_batch(b.config(), *t, pd.index, pd.records, received, now_ms);
      if (!batch.status.ok()) {
        RLOG_DEBUG("produce to %s-%d refused: %s", topic.name.c_str(), pd.index, batch.status.message.c_str());
        auto r = error_response(pd.index, batch.status.code, batch.status.message);
        if (batch.reports_log_start) r.log_start_offset = part->log().log_start_offset();
        if (v >= 8) record_errors(batch.status, r);
        tr.partition_responses.push_back(std::move(r));
        any_error = true;
        continue;
      }
      const auto& header = batch.header;
      if (header.producer_id >= 0) {
        SequenceCheck check = part->producers().check(header);
        if (check.error != ErrorCode::none) {
          // The log refused it: Kafka reports the log start offset.
          tr.partition_responses.push_back(error_response(pd.index, check.error));
          tr.partition_responses.back().log_start_offset = part->log().log_start_offset();
          any_error = true;
          continue;
        }
        if (check.duplicate_of) {
          // Already appended: acknowledge with the original offsets, append nothing.
          PartitionResponse r;
          r.index = pd.index;
          r.base_offset = check.duplicate_of->first_offset;
          if (t->config.log.message_timestamp_type == storage::TimestampType::log_append_time)
            r.log_append_time_ms = check.duplicate_of->timestamp;
          r.log_start_offset = part->log().log_start_offset();
          tr.partition_responses.push_back(std::move(r));
          if (req.acks == -1) to_sync.push_back(part->log_ptr());
          continue;
        }
      }
      auto info = part->log().append(batch.bytes, part->leader_epoch());
      if (!info) {
        RLOG_ERROR("append to %s-%d failed: %s", topic.name.c_str(), pd.index, info.error().message().c_str());
        tr.partition_responses.push_back(error_response(pd.index, ErrorCode::kafka_storage_error));
        any_error = true;
        continue;
      }
      if (header.producer_id >= 0)
        part->producers().update(header, info->base_offset,
                                 info->log_append_time_ms >= 0 ? info->log_append_time_ms : header.max_timestamp);
      part->fetch_watchers().check_and_complete();
      PartitionResponse r;
      r.index = pd.index;
      r.base_offset = info->base_offset;
      r.log_append_time_ms = info->log_append_time_ms;
      r.log_start_offset = info->log_start_offset;
      tr.partition_responses.push_back(std::move(r));
      if (req.acks == -1) to_sync.push_back(part->log_ptr());
    }
  }

  if (req.acks == 0) {
    // The client reads no response; Kafka closes the connection on an error
    // so the producer notices.
    ctx.send_response = false;
    ctx.close_connection = any_error;
  } else if (!to_sync.empty() && b.config().typed().acks_all_fsync) {
    // The response is already encoded as a success; if the fsync fails the
    // connection is closed instead of sending it, so nothing unsynced is
    // ever acknowledged (the log is failed from then on: every later append
    // answers KAFKA_STORAGE_ERROR).
    ctx.before_send = [broker = &b, logs = std::move(to_sync)] { return sync_logs(*broker, logs); };
  }
  co_return resp;
}

}  // namespace runnel::broker
