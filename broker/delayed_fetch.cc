#include "broker/delayed_fetch.h"

#include <algorithm>
#include <vector>

#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using protocol::ErrorCode;

// Kafka's Partition.fetchRecords: the leader epoch the client names must be
// this one (KIP-320).
ErrorCode check_leader_epoch(const FetchPartition& f) {
  const int32_t epoch = f.partition->leader_epoch();
  if (f.current_leader_epoch < 0 || f.current_leader_epoch == epoch) return ErrorCode::none;
  return f.current_leader_epoch > epoch ? ErrorCode::unknown_leader_epoch : ErrorCode::fenced_leader_epoch;
}

ErrorCode read_error(std::error_code ec) {
  if (ec == storage::StorageErrc::offset_out_of_range) return ErrorCode::offset_out_of_range;
  // A closed log belongs to a partition deleted while the fetch waited.
  if (ec == storage::StorageErrc::closed) return ErrorCode::unknown_topic_or_partition;
  return ErrorCode::kafka_storage_error;
}

// Reads one partition with `budget` bytes left; returns the bytes read, or
// the error its slot now carries.
int64_t read_one(FetchPartition& f, int64_t budget, bool min_one_batch, ErrorCode& error) {
  auto& out = *f.out;
  out.records = protocol::Records::view({});
  if (error = check_leader_epoch(f); error != ErrorCode::none) {
    out.error_code = protocol::code(error);
    return 0;
  }
  storage::Log& log = f.partition->log();
  auto read = log.read(f.fetch_offset, std::min<int64_t>(f.max_bytes, budget), std::nullopt, min_one_batch);
  out.high_watermark = log.high_watermark();
  out.last_stable_offset = out.high_watermark;
  out.log_start_offset = log.log_start_offset();
  error = read ? ErrorCode::none : read_error(read.error());
  out.error_code = protocol::code(error);
  if (!read || read->records.length <= 0) return 0;
  out.records = protocol::Records::file(read->records);
  return read->records.length;
}

}  // namespace

FetchRead read_partitions(std::span<FetchPartition> partitions, int64_t max_bytes) {
  FetchRead r;
  for (auto& f : partitions) {
    if (!f.partition) {
      r.error = true;
      continue;
    }
    ErrorCode error = ErrorCode::none;
    // Kafka's readFromLog: the budget shrinks by what each partition
    // returned; only the first partition with data may exceed it.
    r.bytes += read_one(f, std::max<int64_t>(0, max_bytes - r.bytes), /*min_one_batch=*/r.bytes == 0, error);
    r.error = r.error || error != ErrorCode::none;
  }
  return r;
}

awaitable<void> fetch_messages(DelayedOperations& purgatory, std::span<FetchPartition> partitions,
                               FetchParams params) {
  // Kafka: fetchMinBytes = min(MinBytes, the response's max bytes).
  const int64_t min_bytes = std::min<int64_t>(params.min_bytes, params.max_bytes);
  FetchRead now = read_partitions(partitions, params.max_bytes);
  if (params.max_wait.count() <= 0 || now.error || now.bytes >= min_bytes) co_return;

  // Every partition here is hosted: an unhosted one is an error above.
  std::vector<WatchList*> watch;
  watch.reserve(partitions.size());
  for (auto& f : partitions) watch.push_back(&f.partition->fetch_watchers());
  // DelayedFetch.tryComplete, asked at every append to (or deletion of) a
  // partition watched: complete once MinBytes are there or a partition has
  // an error. Each check reads into the response, so a completed wait has
  // its answer ready.
  auto ready = [partitions, max_bytes = params.max_bytes, min_bytes] {
    FetchRead r = read_partitions(partitions, max_bytes);
    return r.error || r.bytes >= min_bytes;
  };
  bool completed = co_await wait_until(purgatory, watch, DelayedOperations::Clock::now() + params.max_wait, ready);
  // DelayedFetch.onComplete reads again at the deadline: retention may have
  // moved the log start while nothing was appended.
  if (!completed) read_partitions(partitions, params.max_bytes);
}

}  // namespace runnel::broker
