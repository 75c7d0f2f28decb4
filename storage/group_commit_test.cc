#include <catch2/catch.hpp>

#include <thread>

#include "storage/flush_stats.h"
#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

TEST_CASE("concurrent appenders waiting for sync share fdatasyncs", "[storage]") {
  TempDir tmp;
  LogConfig c;
  c.segment_bytes = 64 << 10;  // rolls too, so rolled files join the group
  auto log = Log::open(tmp.path / "t-0", c, LogOptions{});
  REQUIRE(log);
  constexpr int kThreads = 8, kEach = 40;
  const auto& bounds = FlushStats::kBatchBuckets;
  const uint64_t rounds_before = flush_stats().group_commit_size.count(bounds);
  const double waiters_before = flush_stats().group_commit_size.sum();
  const uint64_t fsyncs_before = flush_stats().flush_ms.count(FlushStats::kFlushBucketsMs);
  std::atomic<int> acked{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        Bytes b = batch_of(1, static_cast<uint64_t>(t * 1000 + i), 200);
        auto info = append(**log, b, 0);
        if (!info || (*log)->sync()) {
          ++failed;
          continue;
        }
        // Acknowledged: the batch is below the recovery point.
        if ((*log)->recovery_point() <= info->last_offset) ++failed;
        ++acked;
      }
    });
  for (auto& th : threads) th.join();
  REQUIRE(failed == 0);
  REQUIRE(acked == kThreads * kEach);
  REQUIRE((*log)->recovery_point() == kThreads * kEach);
  uint64_t syncs = (*log)->sync_count();
  INFO("fdatasync rounds: " << syncs << " for " << acked << " acknowledged appends");
  REQUIRE(syncs > 0);
  REQUIRE(syncs < static_cast<uint64_t>(acked.load()));
  // /metrics' view: one batch size a round, each waiting appender in at
  // most one of them, and at least one fdatasync a round.
  CHECK(flush_stats().group_commit_size.count(bounds) - rounds_before == syncs);
  const double waiters = flush_stats().group_commit_size.sum() - waiters_before;
  CHECK(waiters >= static_cast<double>(syncs));
  CHECK(waiters <= static_cast<double>(acked.load()));
  CHECK(flush_stats().flush_ms.count(FlushStats::kFlushBucketsMs) - fsyncs_before >= syncs);
  REQUIRE(read_all(**log).size() == kThreads * kEach);
  // A sync with nothing new to write does no I/O.
  REQUIRE_FALSE((*log)->sync());
  REQUIRE((*log)->sync_count() == syncs);
}
