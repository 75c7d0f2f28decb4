#include "broker/group/purgatory_timer.h"

#include <algorithm>
#include <chrono>

namespace runnel::broker::group {

// One key's operation. It waits on its own watch list only so that it can
// be completed early (dropped): a check of that list finds it complete.
class PurgatoryTimer::Task final : public DelayedOperation {
 public:
  Task(PurgatoryTimer& owner, std::string key, std::function<void()> operation)
      : owner_(owner), key_(std::move(key)), operation_(std::move(operation)) {}

  WatchList drop_list;

  void drop() {
    dropped_ = true;
    drop_list.check_and_complete();
  }

 protected:
  bool try_complete() override { return dropped_; }

  void on_complete(bool expired) override {
    if (dropped_ || !expired) return;
    // The key is free before the operation runs: it may schedule the key again.
    auto it = owner_.tasks_.find(key_);
    if (it != owner_.tasks_.end() && it->second.get() == this) owner_.tasks_.erase(it);
    auto operation = std::move(operation_);
    if (!owner_.paused_()) operation();
  }

 private:
  PurgatoryTimer& owner_;
  std::string key_;
  std::function<void()> operation_;
  bool dropped_ = false;
};

PurgatoryTimer::PurgatoryTimer(asio::any_io_executor ex, const Clock& clock, std::function<bool()> paused)
    : clock_(clock), paused_(std::move(paused)), purgatory_(std::move(ex)) {}

PurgatoryTimer::~PurgatoryTimer() {
  // Nothing runs at destruction: drop every task before the purgatory
  // expires what is left.
  auto tasks = std::move(tasks_);
  for (auto& [key, task] : tasks) task->drop();
}

void PurgatoryTimer::schedule(const std::string& key, int64_t deadline_ms, std::function<void()> operation) {
  cancel(key);
  auto task = std::make_shared<Task>(*this, key, std::move(operation));
  tasks_[key] = task;
  WatchList* watch[] = {&task->drop_list};
  const int64_t delay_ms = std::max<int64_t>(deadline_ms - clock_.wall_ms(), 0);
  purgatory_.try_complete_else_watch(task, watch,
                                     DelayedOperations::Clock::now() + std::chrono::milliseconds(delay_ms));
}

void PurgatoryTimer::cancel(const std::string& key) {
  auto it = tasks_.find(key);
  if (it == tasks_.end()) return;
  std::shared_ptr<Task> task = std::move(it->second);
  tasks_.erase(it);
  task->drop();
}

}  // namespace runnel::broker::group
