#include "replication/delayed_delete_records.h"

#include <algorithm>
#include <vector>

namespace runnel::replication {

namespace {

// ReplicaManager.deleteRecords' onAcks for one waiting partition: done
// with an error once it is no longer the leader hosted here, done once its
// low watermark has reached the required offset, else still pending.
void check_entry(DeleteRecordsEntry& e, const IsLiveBroker& is_live, const IsHosted& is_hosted) {
  ErrorCode error = ErrorCode::none;
  Offset low = kUnknownOffset;
  if (!is_hosted(*e.partition)) error = ErrorCode::unknown_topic_or_partition;
  else error = e.partition->check_local_log(std::nullopt, /*require_leader=*/true);
  if (error == ErrorCode::none) {
    low = e.partition->low_watermark_if_leader(is_live);
    if (low < e.required_offset) return;
  }
  e.acks_pending = false;
  e.error = error;
  e.low_watermark = low;
}

// DelayedDeleteRecords.tryComplete. A plain function: GCC 12 mishandles
// lambdas built inside a coroutine from its by-value parameters.
std::function<bool()> low_watermark_check(std::span<DeleteRecordsEntry> entries, IsLiveBroker is_live,
                                          IsHosted is_hosted) {
  return [entries, is_live = std::move(is_live), is_hosted = std::move(is_hosted)] {
    for (auto& e : entries)
      if (e.acks_pending) check_entry(e, is_live, is_hosted);
    return std::none_of(entries.begin(), entries.end(), [](const DeleteRecordsEntry& e) { return e.acks_pending; });
  };
}

}  // namespace

awaitable<void> wait_for_low_watermark(broker::DelayedOperations& purgatory, std::span<DeleteRecordsEntry> entries,
                                       std::chrono::milliseconds timeout, IsLiveBroker is_live, IsHosted is_hosted) {
  // Kafka's deleteRecordsOnLeader answers the low watermark right after
  // the deletion; a timed-out partition keeps it.
  std::vector<broker::WatchList*> watch;
  for (auto& e : entries) {
    if (!e.partition || e.error != ErrorCode::none) continue;
    e.low_watermark = e.partition->low_watermark_if_leader(is_live);
    e.acks_pending = e.low_watermark < e.required_offset;
    if (e.acks_pending) watch.push_back(&e.partition->delete_records_watchers());
  }
  if (watch.empty()) co_return;
  // Kafka watches every partition of the request and checks them all at
  // each wake-up; the ones already answered keep their answer.
  std::function<bool()> check = low_watermark_check(entries, std::move(is_live), std::move(is_hosted));
  bool completed =
      co_await broker::wait_until(purgatory, watch, broker::DelayedOperations::Clock::now() + timeout, check);
  if (completed) co_return;
  for (auto& e : entries)
    if (e.acks_pending) {
      e.acks_pending = false;
      e.error = ErrorCode::request_timed_out;
    }
}

}  // namespace runnel::replication
