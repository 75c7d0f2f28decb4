#include "broker/transaction/marker_writer.h"

#include <deque>
#include <vector>

#include "base/clock.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/logging.h"
#include "protocol/records/control_record.h"

namespace runnel::broker::transaction {

namespace {

namespace p = protocol;
using p::ErrorCode;

// The logs that took a marker, fsynced together. A plain function: see run_blocking.
std::function<std::error_code()> sync_logs(std::vector<std::shared_ptr<storage::Log>> logs) {
  return [logs = std::move(logs)] {
    for (const auto& log : logs)
      if (auto ec = log->sync()) return ec;
    return std::error_code{};
  };
}

}  // namespace

awaitable<void> write_markers(Broker& b, std::span<MarkerTarget> targets) {
  const int64_t now_ms = runnel::Clock::system().wall_ms();
  // Each partition appends a batch of its own (the append rewrites its base
  // offset in place); a deque keeps them where the validations point.
  std::deque<p::Bytes> batches;
  std::vector<replication::AppendEntry> entries(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    MarkerTarget& t = targets[i];
    auto& e = entries[i];
    if (t.error != ErrorCode::none) {
      e.result.status = {t.error, {}, {}};
      continue;
    }
    auto topic = b.topics().find(t.topic);
    e.partition = topic ? b.replica_manager().get_partition(t.topic, PartitionId(t.partition)) : nullptr;
    if (!e.partition) {
      e.result.status = {b.replica_manager().missing_partition_error(t.topic, PartitionId(t.partition)), {}, {}};
      continue;
    }
    const TxnMarker& m = *t.marker;
    const p::records::EndTxnMarker end{m.commit ? p::records::ControlRecordType::commit
                                                : p::records::ControlRecordType::abort,
                                       m.coordinator_epoch};
    e.request.origin = replication::AppendOrigin::coordinator;
    e.request.min_insync_replicas = topic->config.min_insync_replicas;
    e.request.transaction_version = m.transaction_version;
    e.request.validate = replication::built_batch(
        batches.emplace_back(p::records::build_end_txn_marker_batch(m.producer_id, m.producer_epoch, end, now_ms)));
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
  for (size_t i = 0; i < targets.size(); ++i) {
    MarkerTarget& t = targets[i];
    if (t.error != ErrorCode::none) continue;
    t.error = entries[i].result.ok() ? sync_error : entries[i].result.status.code;
    // The group coordinator applies a marker on its partition once it is
    // durable: the transaction's offsets become committed, or are dropped
    // (Kafka's GroupCoordinator.completeTransaction).
    if (t.error == ErrorCode::none && t.topic == group::kOffsetsTopic)
      b.groups().coordinator().complete_transaction(t.partition, t.marker->producer_id, t.marker->commit);
  }
}

}  // namespace runnel::broker::transaction
