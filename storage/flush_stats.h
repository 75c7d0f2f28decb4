// Process-wide counts of the log's durability work, for /metrics: every
// fdatasync of a log's files and how long it took (Kafka's
// LogFlushStats.LogFlushRateAndTimeMs), and how many acks=all appenders
// each group-commit round made durable at once (group_commit.h). Relaxed
// atomics (base/histogram.h): the log threads observe without a lock.
#pragma once

#include <array>

#include "base/histogram.h"

namespace runnel::storage {

struct FlushStats {
  static constexpr std::array<double, 12> kFlushBucketsMs{0.1, 0.25, 0.5, 1, 2, 5, 10, 25, 50, 100, 250, 1000};
  static constexpr std::array<double, 11> kBatchBuckets{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

  Histogram flush_ms;           // each fdatasync of a segment, index or cleaned file
  Histogram group_commit_size;  // appenders waiting on one group-commit round
};

FlushStats& flush_stats();

}  // namespace runnel::storage
