#include "replication/delayed_fetch.h"

#include <algorithm>
#include <vector>

namespace runnel::replication {

namespace {

// Reads one partition with `budget` bytes left; returns the bytes read, or
// the error its slot now carries.
int64_t read_one(FetchPartition& f, int64_t budget, bool min_one_batch, const FetchParams& params,
                 bool update_fetch_state, ErrorCode& error, bool& diverging) {
  auto& out = *f.out;
  out.records = protocol::Records::view({});
  const int64_t max_bytes = std::min<int64_t>(f.max_bytes, budget);
  PartitionRead read = params.replica
                           ? f.partition->fetch_records_for_follower(*params.replica, f.fetch_offset,
                                                                     f.log_start_offset, f.last_fetched_epoch,
                                                                     max_bytes, f.current_leader_epoch,
                                                                     min_one_batch, update_fetch_state)
                           : f.partition->read(f.fetch_offset, max_bytes, params.isolation, f.current_leader_epoch,
                                               min_one_batch);
  error = read.error;
  out.error_code = protocol::code(error);
  out.diverging_epoch = {};
  diverging = read.diverging_epoch.has_value();
  if (diverging) {
    out.diverging_epoch.epoch = read.diverging_epoch->leader_epoch.value();
    out.diverging_epoch.end_offset = read.diverging_epoch->end_offset.value();
  }
  if (read.offsets) {
    out.high_watermark = read.offsets->high_watermark.value();
    out.last_stable_offset = read.offsets->last_stable_offset.value();
    out.log_start_offset = read.offsets->log_start_offset.value();
  }
  if (params.isolation == FetchIsolation::txn_committed) {
    // An empty list, not null, for read_committed, as Kafka answers.
    auto& aborted = out.aborted_transactions.emplace();
    for (const auto& t : read.aborted_transactions) aborted.push_back({t.producer_id, t.first_offset, {}});
  }
  if (error != ErrorCode::none || read.records.length <= 0) return 0;
  out.records = protocol::Records::file(read.records);
  return read.records.length;
}

// DelayedFetch.tryComplete, asked at every append to (or deletion of) a
// partition watched: complete once MinBytes are there or a partition has
// an error. Each check reads into the response, so a completed wait has
// its answer ready. A plain function: GCC 12 mishandles lambdas built
// inside a coroutine from its by-value parameters.
std::function<bool()> ready_check(std::span<FetchPartition> partitions, const FetchParams& params, int64_t min_bytes) {
  return [partitions, params, min_bytes] {
    FetchRead r = read_partitions(partitions, params, /*update_fetch_state=*/false);
    return r.error || r.bytes >= min_bytes;
  };
}

}  // namespace

FetchRead read_partitions(std::span<FetchPartition> partitions, const FetchParams& params, bool update_fetch_state) {
  const int64_t max_bytes = params.max_bytes;
  FetchRead r;
  for (auto& f : partitions) {
    if (!f.partition) {
      r.error = true;
      continue;
    }
    ErrorCode error = ErrorCode::none;
    bool diverging = false;
    // Kafka's readFromLog: the budget shrinks by what each partition
    // returned; only the first partition with data may exceed it.
    r.bytes += read_one(f, std::max<int64_t>(0, max_bytes - r.bytes), /*min_one_batch=*/r.bytes == 0, params,
                        update_fetch_state, error, diverging);
    // Kafka answers at once on an error or a diverging epoch.
    r.error = r.error || error != ErrorCode::none || diverging;
  }
  return r;
}

awaitable<void> fetch_messages(broker::DelayedOperations& purgatory, std::span<FetchPartition> partitions,
                               FetchParams params, std::function<void()> after_read) {
  // Kafka: fetchMinBytes = min(MinBytes, the response's max bytes).
  const int64_t min_bytes = std::min<int64_t>(params.min_bytes, params.max_bytes);
  FetchRead now = read_partitions(partitions, params, /*update_fetch_state=*/true);
  if (after_read) after_read();
  if (params.max_wait.count() <= 0 || now.error || now.bytes >= min_bytes) co_return;

  // Every partition here is hosted: an unhosted one is an error above.
  std::vector<broker::WatchList*> watch;
  watch.reserve(partitions.size());
  for (auto& f : partitions) watch.push_back(&f.partition->fetch_watchers());
  bool completed = co_await broker::wait_until(purgatory, watch,
                                               broker::DelayedOperations::Clock::now() + params.max_wait,
                                               ready_check(partitions, params, min_bytes));
  // DelayedFetch.onComplete reads again at the deadline: retention may have
  // moved the log start while nothing was appended.
  if (!completed) read_partitions(partitions, params, /*update_fetch_state=*/false);
}

}  // namespace runnel::replication
