// What Kafka's RequestMetrics beans count beside RequestsPerSec
// (counters.h): ErrorsPerSec{request, error} and TotalTimeMs{request}, here
// a Prometheus histogram by API key and version. As in counters.h each
// count is a relaxed atomic in a table allocated once: no lock and no
// allocation per request.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "base/histogram.h"

namespace runnel::broker::admin {

// Error codes in responses, by API key: each ErrorCode a response carries,
// NONE included, as Kafka's errorCounts() walks it (one per partition for
// Produce and Fetch). Codes outside -1..kMaxError are not counted.
class ErrorCounters {
 public:
  static constexpr int kApiKeys = 128;
  static constexpr int kMaxError = 159;
  static constexpr int kErrors = kMaxError + 2;  // -1 (UNKNOWN_SERVER_ERROR) .. kMaxError

  ErrorCounters() : counts_(std::make_unique<std::array<std::atomic<uint64_t>, kApiKeys * kErrors>>()) {}

  void count(int16_t api_key, int16_t error_code, uint64_t n = 1) {
    if (auto* c = slot(api_key, error_code)) c->fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t get(int16_t api_key, int16_t error_code) const {
    auto* c = const_cast<ErrorCounters*>(this)->slot(api_key, error_code);
    return c ? c->load(std::memory_order_relaxed) : 0;
  }

  // Counts every error code of a generated response (for_each_error_code),
  // summed first so a response of a thousand NONE partitions costs one
  // atomic add, not a thousand.
  template <typename Response>
  void count_response(int16_t api_key, const Response& response) {
    if constexpr (requires(Tally& t) { response.for_each_error_code(t); }) {
      Tally tally{this, api_key};
      response.for_each_error_code(tally);
      for (size_t i = 0; i < tally.used; ++i) count(api_key, tally.codes[i], tally.counts[i]);
    }
  }

 private:

  // A few distinct codes per response; past kSlots the rest count one by one.
  struct Tally {
    static constexpr size_t kSlots = 8;
    ErrorCounters* counters;
    int16_t api_key;
    std::array<int16_t, kSlots> codes{};
    std::array<uint64_t, kSlots> counts{};
    size_t used = 0;
    void operator()(int16_t code) {
      for (size_t i = 0; i < used; ++i)
        if (codes[i] == code) {
          ++counts[i];
          return;
        }
      if (used == kSlots) {
        counters->count(api_key, code);
        return;
      }
      codes[used] = code;
      counts[used++] = 1;
    }
  };

  std::atomic<uint64_t>* slot(int16_t api_key, int16_t error_code) {
    if (api_key < 0 || api_key >= kApiKeys || error_code < -1 || error_code > kMaxError) return nullptr;
    return &(*counts_)[static_cast<size_t>(api_key) * kErrors + static_cast<size_t>(error_code + 1)];
  }

  std::unique_ptr<std::array<std::atomic<uint64_t>, kApiKeys * kErrors>> counts_;
};

// TotalTimeMs: from a request's last byte read to its response's last byte
// written (or, for a request with no response, to when its handler is done).
// Buckets in milliseconds; each (API key, version) has its own histogram.
class RequestTimes {
 public:
  static constexpr int kApiKeys = 128;
  static constexpr int kVersions = 32;
  static constexpr std::array<double, 14> kBucketsMs{0.5, 1,   2,    5,    10,   25,   50,
                                                     100, 250, 500, 1000, 2500, 5000, 10000};

  RequestTimes() : rows_(std::make_unique<std::array<Histogram, kApiKeys * kVersions>>()) {}

  void record(int16_t api_key, int16_t version, std::chrono::steady_clock::duration took) {
    if (Histogram* h = find(api_key, version))
      h->observe(std::chrono::duration<double, std::milli>(took).count(), kBucketsMs);
  }
  const Histogram* get(int16_t api_key, int16_t version) const {
    return const_cast<RequestTimes*>(this)->find(api_key, version);
  }

 private:
  Histogram* find(int16_t api_key, int16_t version) {
    if (api_key < 0 || api_key >= kApiKeys || version < 0 || version >= kVersions) return nullptr;
    return &(*rows_)[static_cast<size_t>(api_key) * kVersions + static_cast<size_t>(version)];
  }
  std::unique_ptr<std::array<Histogram, kApiKeys * kVersions>> rows_;
};

}  // namespace runnel::broker::admin
