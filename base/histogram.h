// A Prometheus-style histogram of relaxed atomics: cumulative buckets are
// computed when read, so observing is one bucket add and one sum add, with
// no lock and no allocation. The bucket bounds are the caller's constant
// (up to kMaxBuckets of them, ascending); the last count is +Inf.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <span>

namespace runnel {

class Histogram {
 public:
  static constexpr size_t kMaxBuckets = 15;

  void observe(double value, std::span<const double> bounds) {
    size_t b = 0;
    while (b < bounds.size() && value > bounds[b]) ++b;
    counts_[b].fetch_add(1, std::memory_order_relaxed);
    // In thousandths, so a sum of milliseconds keeps microseconds.
    sum_milli_.fetch_add(value <= 0 ? 0 : static_cast<uint64_t>(value * 1000.0), std::memory_order_relaxed);
  }

  // Observations at or below bounds[b] (b == bounds.size(): all of them).
  uint64_t cumulative(size_t b) const {
    uint64_t n = 0;
    for (size_t i = 0; i <= b && i <= kMaxBuckets; ++i) n += counts_[i].load(std::memory_order_relaxed);
    return n;
  }
  uint64_t count(std::span<const double> bounds) const { return cumulative(bounds.size()); }
  double sum() const { return static_cast<double>(sum_milli_.load(std::memory_order_relaxed)) / 1000.0; }

 private:
  std::array<std::atomic<uint64_t>, kMaxBuckets + 1> counts_{};
  std::atomic<uint64_t> sum_milli_{0};
};

}  // namespace runnel
