// The coordinator's timers on the broker's purgatory (broker/delayed_operations.h):
// each key is one delayed operation with the key's deadline, so an idle
// broker sleeps until the next deadline instead of polling. Rescheduling or
// cancelling a key completes its operation at once without running it: it
// leaves the purgatory and stops its timer, so a member heartbeating every
// few seconds holds one waiting operation, not one per heartbeat.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "base/clock.h"
#include "broker/asio.h"
#include "broker/delayed_operations.h"
#include "broker/group/coordinator_timer.h"

namespace runnel::broker::group {

class PurgatoryTimer final : public CoordinatorTimer {
 public:
  // `paused()` true: due operations are dropped instead of run (the broker
  // is shutting down; no member expires while connections drain).
  // Deadlines are in `clock`'s wall_ms(), the coordinator's.
  PurgatoryTimer(asio::any_io_executor ex, const Clock& clock, std::function<bool()> paused);
  ~PurgatoryTimer() override;

  void schedule(const std::string& key, int64_t deadline_ms, std::function<void()> operation) override;
  void cancel(const std::string& key) override;
  // Keys with an operation waiting.
  size_t pending() const { return tasks_.size(); }

 private:
  class Task;

  const Clock& clock_;
  std::function<bool()> paused_;
  DelayedOperations purgatory_;
  std::unordered_map<std::string, std::shared_ptr<Task>> tasks_;
};

}  // namespace runnel::broker::group
