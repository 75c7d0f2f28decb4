// Produce (key 0): validates and appends one record batch per partition.
//
// v0-2 stay in the advertised range only for librdkafka 2.0.2's compression
// check (KAFKA-18659) and are refused with UNSUPPORTED_VERSION, as Kafka 4
// does. acks=0 gets no response (and an error closes the connection);
// acks=-1 is acknowledged once the append is fsynced when
// runnel.acks.all.fsync is true (Runnel's default), with concurrent
// producers sharing fsyncs (storage/group_commit.h). A request holding a
// transactional batch needs a transactional id with WRITE on it, else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED on every partition, as Kafka. Each
// topic needs WRITE (TOPIC_AUTHORIZATION_FAILED on its partitions).
//
// With transaction.partition.verification.enable (KIP-890 part 1, Kafka's
// default) a transactional batch that would open a transaction on its
// partition is first checked with the coordinator: the partition must be in
// the producer's ongoing transaction, so that a late write after an abort
// cannot open a transaction nobody will end
// (transaction/partition_verification.h), at its broker in a cluster; the
// partition's verification guard, taken before the question, refuses the
// append if the transaction ended meanwhile (INVALID_TXN_STATE, as Kafka's
// VerificationGuard). TRANSACTION_ABORTABLE reaches clients from v11.
#include <map>
#include <set>

#include "base/clock.h"
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/leader_hint.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "broker/produce_validation.h"
#include "broker/quota_managers.h"
#include "broker/transaction/partition_verification.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"
#include "protocol/records/batch_format.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using PartitionResponse = p::ProduceResponse::TopicProduceResponse::PartitionProduceResponse;

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
std::function<replication::PreparedBatch()> validation(const BrokerConfig& config, std::shared_ptr<Topic> topic,
                                                       int32_t partition, const protocol::Records& records,
                                                       const std::optional<protocol::records::BatchHeader>& header,
                                                       int64_t now_ms) {
  return [&config, topic = std::move(topic), partition, &records, &header, now_ms] {
    return prepare_batch(config, *topic, partition, records, header, now_ms);
  };
}

// The partition's answer, as Kafka's PartitionResponse carries it.
PartitionResponse partition_response(int32_t index, replication::LeaderAppendResult& result, int16_t version) {
  PartitionResponse r;
  r.index = index;
  r.error_code = p::code(result.status.code);
  if (!result.status.message.empty()) r.error_message = result.status.message;
  r.base_offset = result.base_offset.value();
  r.log_append_time_ms = result.log_append_time_ms;
  r.log_start_offset = result.log_start_offset.value();
  if (version >= 8) record_errors(result.status, r);
  return r;
}

// The fsync of an acks=all request's appends, started as soon as they are
// in the logs, so that it runs while the followers fetch them rather than
// after (the leader's fsync and the ISR's, not one then the other); the
// handler waits for its outcome before it answers. Each log is synced
// whatever the others' outcome: one failed dir (JBOD) fails only its own
// partitions' appends.
using SyncOutcomes = std::vector<std::pair<size_t, std::error_code>>;  // entry index, fsync error
using StartedSync = group::Completion<SyncOutcomes>;

std::function<SyncOutcomes()> sync_each(std::vector<std::pair<size_t, std::shared_ptr<storage::Log>>> logs) {
  return [logs = std::move(logs)] {
    SyncOutcomes out;
    for (const auto& [entry, log] : logs) out.emplace_back(entry, log->sync());
    return out;
  };
}

awaitable<void> run_sync(Broker& broker, std::vector<std::pair<size_t, std::shared_ptr<storage::Log>>> logs,
                         std::function<void(SyncOutcomes)> done) {
  done(co_await broker.run_blocking(sync_each(std::move(logs))));
}

std::shared_ptr<StartedSync> start_sync(Broker& broker, std::span<const replication::AppendEntry> entries) {
  std::vector<std::pair<size_t, std::shared_ptr<storage::Log>>> logs;
  for (size_t i = 0; i < entries.size(); ++i)
    if (entries[i].partition && entries[i].result.ok()) logs.emplace_back(i, entries[i].partition->log_ptr());
  if (logs.empty()) return nullptr;
  auto sync = std::make_shared<StartedSync>(broker.io().get_executor());
  asio::co_spawn(broker.io(), run_sync(broker, std::move(logs), group::completer(sync)), asio::detached);
  return sync;
}

// An append whose fsync failed is not acknowledged: its partition answers
// KAFKA_STORAGE_ERROR (its log dir is offline from then on, so every later
// request to it does too), the others as they are.
void fail_unsynced(std::span<replication::AppendEntry> entries, const SyncOutcomes& outcomes) {
  for (const auto& [i, ec] : outcomes) {
    if (!ec || !entries[i].result.ok()) continue;
    RLOG_ERROR("fsync of %s for acks=all failed: %s; the append is not acknowledged",
               entries[i].partition->log_ptr()->dir().c_str(), ec.message().c_str());
    entries[i].result = replication::LeaderAppendResult{};
    entries[i].result.status = {ErrorCode::kafka_storage_error, {}, {}};
  }
}

// Whether any partition is one this broker leads but has not opened yet
// (HostedPartitions::leads_unopened): the request waits, bounded by its
// timeout and a few seconds, rather than be answered NOT_LEADER_OR_FOLLOWER.
bool leads_unopened(Broker& b, const p::ProduceRequest& req) {
  if (!b.hosted_partitions()) return false;
  for (const auto& topic : req.topic_data)
    for (const auto& pd : topic.partition_data)
      if (b.hosted_partitions()->leads_unopened(topic.name, PartitionId(pd.index))) return true;
  return false;
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
  else if (has_transactional_records(headers) &&
           (!req.transactional_id ||
            !authorized(ctx, AclOperation::write, ResourceType::transactional_id, *req.transactional_id)))
    request_error = ErrorCode::transactional_id_authorization_failed;
  else if (req.acks != 0 && req.acks != 1 && req.acks != -1) request_error = ErrorCode::invalid_required_acks;

  if (request_error == ErrorCode::none && leads_unopened(b, req))
    co_await b.hosted_partitions()->wait_caught_up(
        std::min(HostedPartitions::kOpeningWaitBound, std::chrono::milliseconds(std::max(0, req.timeout_ms))));

  const bool verify = req.transactional_id.has_value();
  const bool verify_transactions = verify && transaction::verification_on(b, v >= 12);
  const int64_t now_ms = runnel::Clock::system().wall_ms();
  // One entry per partition, in request order; the records stay in the
  // request frame (validation and the append read them there).
  std::vector<replication::AppendEntry> entries;
  // The entries to verify first, by producer id and epoch.
  struct PendingVerification {
    size_t entry;
    storage::TopicPartition tp;
    uint64_t guard;
  };
  std::map<std::pair<int64_t, int16_t>, std::vector<PendingVerification>> to_verify;
  auto next_header = headers.begin();
  for (auto& topic : req.topic_data) {
    auto t = b.topics().find(topic.name);
    // Kafka checks WRITE before existence: an unauthorized client learns
    // nothing of which topics exist.
    const bool may_write = authorized(ctx, AclOperation::write, ResourceType::topic, topic.name);
    for (auto& pd : topic.partition_data) {
      const auto& received = *next_header++;
      auto& e = entries.emplace_back();
      if (request_error != ErrorCode::none || !may_write) {
        e.result.status = {may_write ? request_error : ErrorCode::topic_authorization_failed, {}, {}};
        continue;
      }
      e.partition = t ? b.replica_manager().get_partition(topic.name, PartitionId(pd.index)) : nullptr;
      if (!e.partition) {
        e.result.status = {b.replica_manager().missing_partition_error(topic.name, PartitionId(pd.index)), {}, {}};
        continue;
      }
      if (verify && received && received->is_transactional() &&
          transaction::needs_verification(b, *e.partition, received->producer_id, received->producer_epoch, v >= 12))
        to_verify[{received->producer_id, received->producer_epoch}].push_back(
            {entries.size() - 1, {topic.name, pd.index},
             e.partition->producers().start_verification(received->producer_id, now_ms)});
      e.request.verify_transactions = verify_transactions;
      e.request.origin = replication::AppendOrigin::client;
      e.request.min_insync_replicas = t->config.min_insync_replicas;
      e.request.log_append_time = t->config.log.message_timestamp_type == storage::TimestampType::log_append_time;
      e.request.validate = validation(b.config(), t, pd.index, pd.records, received, now_ms);
    }
  }
  // One question to the coordinator for all the partitions a producer
  // would open a transaction on; a refused partition is not appended.
  for (auto& [producer, pending] : to_verify) {
    std::set<storage::TopicPartition> partitions;
    for (const auto& pv : pending) partitions.insert(pv.tp);
    // Transaction protocol v2 (Produce v12+): the coordinator adds them.
    auto answers = co_await transaction::verify_partitions(b, *req.transactional_id, producer.first, producer.second,
                                                           std::move(partitions), v >= 11, v >= 12);
    for (const auto& pv : pending) {
      const ErrorCode error = answers[pv.tp];
      if (error == ErrorCode::none) {
        entries[pv.entry].request.verification_guard = pv.guard;
        continue;
      }
      entries[pv.entry].partition = nullptr;
      entries[pv.entry].result.status = {error, {}, {}};
    }
  }
  // Once appended: with runnel.acks.all.fsync the fsync starts, and the
  // connection may serve its next Produce while this one waits for
  // replication (connection.h): their records come after these.
  std::shared_ptr<StartedSync> sync;
  const bool fsync = req.acks == -1 && b.config().typed().acks_all_fsync;
  const std::function<void()> appended = [&] {
    if (fsync) sync = start_sync(b, entries);
    if (ctx.release_order) ctx.release_order();
  };
  co_await b.replica_manager().append_records(req.acks, std::chrono::milliseconds(std::max(0, req.timeout_ms)),
                                              entries, appended);
  if (sync) fail_unsynced(entries, co_await group::wait_for(sync));

  bool any_error = false;
  auto entry = entries.begin();
  LeaderHints hints(*b.metadata_cache(), ctx.listener_name);
  for (auto& topic : req.topic_data) {
    auto& tr = resp.responses.emplace_back();
    tr.name = topic.name;
    for (auto& pd : topic.partition_data) {
      auto& e = *entry++;
      auto& r = tr.partition_responses.emplace_back(partition_response(pd.index, e.result, v));
      if (!e.result.ok()) any_error = true;
      if (v >= 10 && e.result.status.code == ErrorCode::not_leader_or_follower) {
        const LeaderHint h = hints.current_leader(topic.name, pd.index);
        r.current_leader = {h.leader_id, h.leader_epoch, {}};
      }
    }
  }
  hints.add_endpoints(resp.node_endpoints);

  // Client quotas: the request's bytes against producer_byte_rate and, for
  // a request answered, its time against request_percentage (KafkaApis).
  QuotaManagers& quotas = b.quotas();
  const int64_t bandwidth_throttle = quotas.record_bytes(quotas.produce(), ctx, static_cast<double>(ctx.request_size));
  const int64_t request_throttle = req.acks == 0 ? 0 : quotas.record_request_time(ctx);
  quotas.throttle_larger(quotas.produce(), ctx, bandwidth_throttle, request_throttle);

  if (req.acks == 0) {
    // The client reads no response; Kafka closes the connection on an error
    // so the producer notices.
    ctx.send_response = false;
    ctx.close_connection = any_error;
  }
  co_return resp;
}

}  // namespace runnel::broker
