// The counters the request path bumps and /metrics reads (metrics.h). Each
// is a relaxed atomic in memory allocated once -- a partition's own, the
// replica manager's all-topics set, a fixed table by API key and version --
// so counting costs no lock and no allocation. Relaxed: a scrape needs each
// value to be one the counter had, not an order between counters.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

namespace runnel::broker::admin {

// Kafka's BrokerTopicMetrics meters that Runnel counts: MessagesInPerSec,
// BytesInPerSec (leader appends of produced and coordinator records, not
// replication) and BytesOutPerSec (record bytes in consumers' fetch
// responses, not followers').
struct TopicCounters {
  std::atomic<uint64_t> messages_in{0};
  std::atomic<uint64_t> bytes_in{0};
  std::atomic<uint64_t> bytes_out{0};

  void count_in(uint64_t messages, uint64_t bytes) {
    messages_in.fetch_add(messages, std::memory_order_relaxed);
    bytes_in.fetch_add(bytes, std::memory_order_relaxed);
  }
  void count_out(uint64_t bytes) { bytes_out.fetch_add(bytes, std::memory_order_relaxed); }
};

// Kafka's RequestMetrics RequestsPerSec{request, version}: requests whose
// header was read, by API key and version. Keys and versions outside the
// table are not counted (no API Runnel serves is).
class RequestCounters {
 public:
  static constexpr int kApiKeys = 128;
  static constexpr int kVersions = 32;

  void count(int16_t api_key, int16_t version) {
    if (api_key < 0 || api_key >= kApiKeys || version < 0 || version >= kVersions) return;
    counts_[static_cast<size_t>(api_key) * kVersions + static_cast<size_t>(version)].fetch_add(
        1, std::memory_order_relaxed);
  }
  uint64_t get(int16_t api_key, int16_t version) const {
    if (api_key < 0 || api_key >= kApiKeys || version < 0 || version >= kVersions) return 0;
    return counts_[static_cast<size_t>(api_key) * kVersions + static_cast<size_t>(version)].load(
        std::memory_order_relaxed);
  }

 private:
  std::array<std::atomic<uint64_t>, kApiKeys * kVersions> counts_{};
};

}  // namespace runnel::broker::admin
