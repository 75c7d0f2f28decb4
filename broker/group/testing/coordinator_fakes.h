// Test doubles of what a group coordinator runs on: an in-memory
// __consumer_offsets, timers on a virtual clock, and that clock. Shared by
// the classic and the consumer group coordinators' unit tests.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "broker/group/consumer/topics_image.h"
#include "broker/group/coordinator_timer.h"
#include "broker/group/offsets_store.h"

namespace runnel::broker::group::testing {

using protocol::ErrorCode;

// Appends complete at once, or (`defer`) only when the test says so, as
// they will when a write completes on the high watermark.
// Each record is at its index in `records` (one log for every partition:
// offsets only need to grow), with the producer of a transactional write.
struct MemoryStore : OffsetsStore {
  struct Stored {
    int32_t partition;
    OffsetsRecord record;
    int64_t producer_id;
  };
  std::vector<Stored> log;
  std::vector<std::pair<int32_t, OffsetsRecord>> records;
  bool fail = false;
  ErrorCode fail_with = ErrorCode::kafka_storage_error;
  bool defer = false;
  std::vector<std::pair<WriteDone, int64_t>> pending;
  void write(int32_t partition, std::vector<OffsetsRecord> rs, std::optional<TxnProducer> producer,
             WriteDone done) override {
    if (fail) return done({fail_with});
    const auto base = static_cast<int64_t>(log.size());
    for (auto& r : rs) {
      records.emplace_back(partition, r);
      log.push_back({partition, r, producer ? producer->producer_id : -1});
    }
    if (defer) pending.emplace_back(std::move(done), base);
    else done({ErrorCode::none, base});
  }
  void complete_pending(std::error_code ec = {}) {
    auto now = std::exchange(pending, {});
    for (auto& [done, base] : now) done(ec ? Written{ErrorCode::kafka_storage_error} : Written{ErrorCode::none, base});
  }
};

// The coordinator's timers on a virtual clock: advancing it runs what is
// due, earliest first, with the clock at each deadline as a real one would be.
struct VirtualTimer : CoordinatorTimer {
  struct Task {
    int64_t deadline_ms;
    uint64_t order;
    std::function<void()> operation;
  };
  std::map<std::string, Task> tasks;
  uint64_t scheduled = 0;

  void schedule(const std::string& key, int64_t deadline_ms, std::function<void()> operation) override {
    tasks[key] = Task{deadline_ms, scheduled++, std::move(operation)};
  }
  void cancel(const std::string& key) override { tasks.erase(key); }
  bool has(const std::string& key) const { return tasks.count(key) > 0; }

  void advance_to(int64_t& now, int64_t until) {
    for (;;) {
      auto due = tasks.end();
      for (auto it = tasks.begin(); it != tasks.end(); ++it)
        if (it->second.deadline_ms <= until &&
            (due == tasks.end() || std::tie(it->second.deadline_ms, it->second.order) <
                                       std::tie(due->second.deadline_ms, due->second.order)))
          due = it;
      if (due == tasks.end()) break;
      now = std::max(now, due->second.deadline_ms);
      auto operation = std::move(due->second.operation);
      tasks.erase(due);
      operation();
    }
    now = until;
  }
};

// The fixture's `now`, as the coordinator's clock.
struct FixtureClock final : runnel::Clock {
  explicit FixtureClock(const int64_t& now) : now(now) {}
  int64_t wall_ms() const override { return now; }
  int64_t steady_ms() const override { return now; }
  const int64_t& now;
};

// A cluster without topics, for tests that need none.
struct NoTopics final : consumer::TopicsImage {
  std::optional<consumer::TopicImage> find(const std::string&) const override { return std::nullopt; }
  std::optional<std::string> name_of(const consumer::TopicId&) const override { return std::nullopt; }
  void for_each(const std::function<void(const std::string&, const consumer::TopicImage&)>&) const override {}
};

}  // namespace runnel::broker::group::testing
