#include "replication/delayed_produce.h"

#include <vector>

namespace runnel::replication {

namespace {

// DelayedProduce.tryComplete: each pending partition either has its
// records below the high watermark now, or has failed (no longer leader,
// ISR shrunk below min.insync.replicas); done when none is pending.
// A plain function: GCC 12 mishandles lambdas built inside a coroutine
// from its by-value parameters.
std::function<bool()> acks_check(std::span<AppendEntry> entries) {
  return [entries] {
    bool pending = false;
    for (auto& e : entries) {
      if (!e.acks_pending) continue;
      ErrorCode error = ErrorCode::none;
      if (e.partition->enough_replicas_reached(e.result.last_offset + 1, e.request.min_insync_replicas, error)) {
        e.acks_pending = false;
        if (error != ErrorCode::none) e.result.status = {error, {}, {}};
      } else {
        pending = true;
      }
    }
    return !pending;
  };
}

}  // namespace

awaitable<void> wait_for_acks(broker::DelayedOperations& purgatory, std::span<AppendEntry> entries,
                              std::chrono::milliseconds timeout) {
  std::vector<broker::WatchList*> watch;
  for (auto& e : entries)
    if (e.acks_pending) watch.push_back(&e.partition->produce_watchers());
  if (watch.empty()) co_return;
  bool completed = co_await broker::wait_until(purgatory, watch, broker::DelayedOperations::Clock::now() + timeout,
                                               acks_check(entries));
  if (completed) co_return;
  // DelayedProduce.onExpiration: what the ISR has not got in time fails.
  for (auto& e : entries)
    if (e.acks_pending) {
      e.acks_pending = false;
      e.result.status = {ErrorCode::request_timed_out, {}, {}};
    }
}

}  // namespace runnel::replication
