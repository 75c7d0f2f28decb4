#include "broker/delayed_operations.h"

#include <optional>

namespace runnel::broker {

WatchList::~WatchList() {
  for (DelayedOperation* op : ops_)
    std::erase_if(op->watches_, [this](const DelayedOperation::Watch& w) { return w.list == this; });
}

size_t WatchList::check_and_complete() {
  // Completing one operation takes it off this list (and may, through its
  // on_complete, complete or schedule others): hold what is here now.
  std::vector<std::shared_ptr<DelayedOperation>> now;
  now.reserve(ops_.size());
  for (DelayedOperation* op : ops_) now.push_back(*op->held_at_);
  size_t completed = 0;
  for (auto& op : now) {
    if (op->completed_ || !op->try_complete()) continue;
    op->finish(false);
    ++completed;
  }
  return completed;
}

DelayedOperation::~DelayedOperation() { unwatch(); }

void DelayedOperation::unwatch() {
  for (auto& w : watches_) w.list->ops_.erase(w.at);
  watches_.clear();
}

void DelayedOperation::finish(bool expired) {
  if (completed_) return;
  completed_ = true;
  unwatch();
  if (timer_) timer_->cancel();
  // Keep this operation alive through on_complete, then let it go.
  std::shared_ptr<DelayedOperation> self;
  if (owner_) {
    self = std::move(*held_at_);
    owner_->waiting_.erase(held_at_);
    owner_ = nullptr;
  }
  on_complete(expired);
}

bool DelayedOperations::try_complete_else_watch(std::shared_ptr<DelayedOperation> op,
                                                std::span<WatchList* const> watch, Clock::time_point deadline) {
  if (op->try_complete()) {
    op->completed_ = true;
    op->on_complete(false);
    return true;
  }
  DelayedOperation* raw = op.get();
  raw->owner_ = this;
  raw->held_at_ = waiting_.insert(waiting_.end(), std::move(op));
  for (WatchList* list : watch) raw->watches_.push_back({list, list->ops_.insert(list->ops_.end(), raw)});
  raw->timer_ = std::make_unique<asio::steady_timer>(ex_, deadline);
  raw->timer_->async_wait([weak = std::weak_ptr<DelayedOperation>(*raw->held_at_)](const error_code& ec) {
    if (ec) return;  // cancelled: completed before the deadline
    if (auto op = weak.lock()) op->finish(true);
  });
  return false;
}

void DelayedOperations::expire_all() {
  while (!waiting_.empty()) {
    auto op = waiting_.front();
    op->finish(true);
  }
}

namespace {

// A coroutine's wait: the coroutine sleeps on `wake`, which on_complete
// cancels, so it resumes through its own executor.
class ConditionWait final : public DelayedOperation {
 public:
  ConditionWait(const asio::any_io_executor& ex, std::function<bool()> condition)
      : wake(ex), condition_(std::move(condition)) {}

  asio::steady_timer wake;
  std::optional<bool> result;

 protected:
  bool try_complete() override { return condition_(); }
  void on_complete(bool expired) override {
    result = !expired;
    wake.cancel();
  }

 private:
  std::function<bool()> condition_;
};

}  // namespace

awaitable<bool> wait_until(DelayedOperations& purgatory, std::span<WatchList* const> watch,
                           DelayedOperations::Clock::time_point deadline, std::function<bool()> condition) {
  auto op = std::make_shared<ConditionWait>(co_await asio::this_coro::executor, std::move(condition));
  if (purgatory.try_complete_else_watch(op, watch, deadline)) co_return true;
  while (!op->result) {
    op->wake.expires_at(asio::steady_timer::time_point::max());
    co_await op->wake.async_wait(as_tuple_awaitable);
  }
  co_return *op->result;
}

}  // namespace runnel::broker
