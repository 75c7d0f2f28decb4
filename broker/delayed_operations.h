// Kafka's purgatory (DelayedOperation / DelayedOperationPurgatory): an
// operation that waits for a condition, with a deadline, watching one or
// more things whose changes may make the condition true.
//
//   - try_complete() says whether the condition holds now; the purgatory
//     asks it once when the operation is scheduled and again every time a
//     watch list it is on is checked (an append to a partition, a follower
//     catching up, a member joining).
//   - on_complete(expired) runs exactly once: when try_complete() first
//     returned true, or at the deadline. From then on the operation is on no
//     watch list and not held by the purgatory: nothing waits forever and
//     nothing is kept after it is done (an idle long-poll Fetch used to stay
//     on its partition's list until the next append).
//
// Single-threaded: everything here runs on the event loop that owns the
// purgatory. Watch lists belong to the watched object (a partition, a
// group); destroying a list completes nothing, it only stops watching.
#pragma once

#include <chrono>
#include <functional>
#include <list>
#include <memory>
#include <span>
#include <vector>

#include "broker/asio.h"

namespace runnel::broker {

class DelayedOperation;
class DelayedOperations;

// The operations waiting on one watched object.
class WatchList {
 public:
  WatchList() = default;
  WatchList(const WatchList&) = delete;
  WatchList& operator=(const WatchList&) = delete;
  ~WatchList();

  // Asks every operation on the list whether it can complete now, and
  // completes those that can. Returns how many completed.
  size_t check_and_complete();
  size_t size() const { return ops_.size(); }

 private:
  friend class DelayedOperation;
  friend class DelayedOperations;
  std::list<DelayedOperation*> ops_;
};

class DelayedOperation {
 public:
  virtual ~DelayedOperation();
  DelayedOperation() = default;
  DelayedOperation(const DelayedOperation&) = delete;
  DelayedOperation& operator=(const DelayedOperation&) = delete;

  bool completed() const { return completed_; }

 protected:
  // True when the operation can finish now. May be called many times.
  virtual bool try_complete() = 0;
  // Runs once, after try_complete() returned true or at the deadline.
  virtual void on_complete(bool expired) = 0;

 private:
  friend class WatchList;
  friend class DelayedOperations;
  struct Watch {
    WatchList* list;
    std::list<DelayedOperation*>::iterator at;
  };

  // Completes the operation unless it already is: leaves every watch list,
  // stops the deadline timer, then runs on_complete.
  void finish(bool expired);
  void unwatch();

  bool completed_ = false;
  std::vector<Watch> watches_;
  std::unique_ptr<asio::steady_timer> timer_;
  // Where the purgatory holds this operation while it waits.
  DelayedOperations* owner_ = nullptr;
  std::list<std::shared_ptr<DelayedOperation>>::iterator held_at_;
};

class DelayedOperations {
 public:
  using Clock = std::chrono::steady_clock;

  explicit DelayedOperations(asio::any_io_executor ex) : ex_(std::move(ex)) {}
  DelayedOperations(const DelayedOperations&) = delete;
  DelayedOperations& operator=(const DelayedOperations&) = delete;
  // Expires whatever still waits.
  ~DelayedOperations() { expire_all(); }

  // Kafka's tryCompleteElseWatch: completes `op` at once when it can;
  // otherwise puts it on every list in `watch` and keeps it until a check
  // of one of them completes it or `deadline` passes.
  // Returns true when it completed at once.
  bool try_complete_else_watch(std::shared_ptr<DelayedOperation> op, std::span<WatchList* const> watch,
                               Clock::time_point deadline);

  // Completes every waiting operation as expired (shutdown).
  void expire_all();
  // Operations waiting (scheduled, not yet completed).
  size_t waiting() const { return waiting_.size(); }

 private:
  friend class DelayedOperation;

  asio::any_io_executor ex_;
  // A list, so that an operation leaves it in constant time however many
  // wait (every idle long-poll Fetch is one).
  std::list<std::shared_ptr<DelayedOperation>> waiting_;
};

// The coroutine form, for a handler that waits inline: resumes when
// `condition()` holds (checked at once and whenever a list in `watch` is
// checked) or at `deadline`. Returns true when the condition held, false
// when the deadline passed first. The caller resumes through its own
// executor, never from inside check_and_complete().
awaitable<bool> wait_until(DelayedOperations& purgatory, std::span<WatchList* const> watch,
                           DelayedOperations::Clock::time_point deadline, std::function<bool()> condition);

}  // namespace runnel::broker
