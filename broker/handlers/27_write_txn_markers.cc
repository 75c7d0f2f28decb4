// WriteTxnMarkers (key 27): a transaction coordinator has the leader of
// each partition a transaction wrote to append the COMMIT or ABORT marker
// that ends it (a control batch, protocol/records/control_record.h). As
// Kafka's handleWriteTxnMarkersRequest: CLUSTER_ACTION on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED everywhere; an unknown partition is
// UNKNOWN_TOPIC_OR_PARTITION; each marker is appended with acks=all
// (AppendOrigin::coordinator, internal topics allowed) and waits up to
// request.timeout.ms for the ISR. The partition checks the producer and
// coordinator epochs (replication/partition.h), so a fenced coordinator's
// marker is TRANSACTION_COORDINATOR_FENCED and a stale one
// INVALID_PRODUCER_EPOCH. With runnel.acks.all.fsync the markers are
// fsynced before the answer, as an acks=all produce is: a coordinator that
// marks a transaction complete must never find its marker lost after a
// crash. A failed fsync answers KAFKA_STORAGE_ERROR, which the coordinator
// retries.
#include <deque>

#include "base/clock.h"
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "protocol/error_codes.h"
#include "protocol/records/control_record.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using MarkerResult = p::WriteTxnMarkersResponse::WritableTxnMarkerResult;

// The logs that took a marker, fsynced together. A plain function: see run_blocking.
std::function<std::error_code()> sync_logs(std::vector<std::shared_ptr<storage::Log>> logs) {
  return [logs = std::move(logs)] {
    for (const auto& log : logs)
      if (auto ec = log->sync()) return ec;
    return std::error_code{};
  };
}

}  // namespace

template <>
awaitable<p::WriteTxnMarkersResponse> handle<p::WriteTxnMarkersApi>(RequestContext& ctx,
                                                                     p::WriteTxnMarkersRequest& req) {
  Broker& b = ctx.broker;
  p::WriteTxnMarkersResponse resp;
  const bool allowed = authorized_on_cluster(ctx, AclOperation::cluster_action);
  const int64_t now_ms = runnel::Clock::system().wall_ms();
  // Each partition appends a batch of its own (the append rewrites its base
  // offset in place); a deque keeps them where the validations point.
  std::deque<p::Bytes> batches;
  std::vector<replication::AppendEntry> entries;
  for (const auto& marker : req.markers) {
    auto& mr = resp.markers.emplace_back();
    mr.producer_id = marker.producer_id;
    const p::records::EndTxnMarker end{
        marker.transaction_result ? p::records::ControlRecordType::commit : p::records::ControlRecordType::abort,
        marker.coordinator_epoch};
    for (const auto& topic : marker.topics) {
      auto& tr = mr.topics.emplace_back();
      tr.name = topic.name;
      for (int32_t index : topic.partition_indexes) {
        tr.partitions.push_back({index, 0, {}});
        auto& e = entries.emplace_back();
        if (!allowed) {
          e.result.status = {ErrorCode::cluster_authorization_failed, {}, {}};
          continue;
        }
        auto t = b.topics().find(topic.name);
        e.partition = t ? b.replica_manager().get_partition(topic.name, PartitionId(index)) : nullptr;
        if (!e.partition) {
          e.result.status = {b.replica_manager().missing_partition_error(topic.name, PartitionId(index)), {}, {}};
          continue;
        }
        e.request.origin = replication::AppendOrigin::coordinator;
        e.request.min_insync_replicas = t->config.min_insync_replicas;
        e.request.transaction_version = marker.transaction_version;
        e.request.validate = replication::built_batch(batches.emplace_back(
            p::records::build_end_txn_marker_batch(marker.producer_id, marker.producer_epoch, end, now_ms)));
      }
    }
  }
  const auto timeout = std::chrono::milliseconds(b.config().get_int("request.timeout.ms"));
  co_await b.replica_manager().append_records(-1, timeout, entries);

  std::vector<std::shared_ptr<storage::Log>> appended;
  if (b.config().typed().acks_all_fsync)
    for (const auto& e : entries)
      if (e.partition && e.result.ok()) appended.push_back(e.partition->log_ptr());
  ErrorCode sync_error = ErrorCode::none;
  if (!appended.empty()) {
    std::error_code ec = co_await b.run_blocking(sync_logs(std::move(appended)));
    if (ec) {
      RLOG_ERROR("fsync of transaction markers failed: %s", ec.message().c_str());
      sync_error = ErrorCode::kafka_storage_error;
    }
  }

  auto entry = entries.begin();
  for (auto& mr : resp.markers)
    for (auto& tr : mr.topics)
      for (auto& pr : tr.partitions) {
        const auto& e = *entry++;
        pr.error_code = p::code(e.result.ok() ? sync_error : e.result.status.code);
      }
  co_return resp;
}

}  // namespace runnel::broker
