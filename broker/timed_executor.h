// An executor that runs every function through another and adds the time
// each one ran to a counter. A request handler spawned on it measures the
// time its coroutine held the event loop between suspensions: Kafka's
// request thread time (network and I/O thread time, never the time spent
// waiting in purgatory), which the request_percentage quota is held to. A
// long-poll fetch's wait, an fsync on the blocking pool or an etcd round
// trip costs nothing; decoding, the handler's own work and encoding do.
// Functions run inline inside another timed one (a nested dispatch) count
// for their own counter only.
#pragma once

#include <chrono>
#include <memory>
#include <utility>

#include "broker/asio.h"

namespace runnel::broker {

class TimedExecutor {
 public:
  using Clock = std::chrono::steady_clock;

  TimedExecutor(asio::any_io_executor inner, std::shared_ptr<Clock::duration> spent)
      : inner_(std::move(inner)), spent_(std::move(spent)) {}

  template <typename Property>
  auto query(const Property& p) const -> decltype(asio::query(std::declval<const asio::any_io_executor&>(), p)) {
    return asio::query(inner_, p);
  }
  template <typename Property,
            typename = decltype(asio::require(std::declval<const asio::any_io_executor&>(), std::declval<const Property&>()))>
  TimedExecutor require(const Property& p) const {
    return TimedExecutor(asio::require(inner_, p), spent_);
  }
  template <typename Property,
            typename = decltype(asio::prefer(std::declval<const asio::any_io_executor&>(), std::declval<const Property&>()))>
  TimedExecutor prefer(const Property& p) const {
    return TimedExecutor(asio::prefer(inner_, p), spent_);
  }

  template <typename F>
  void execute(F f) const {
    inner_.execute(Timed<F>{std::move(f), spent_});
  }

  bool operator==(const TimedExecutor& o) const noexcept { return inner_ == o.inner_ && spent_ == o.spent_; }
  bool operator!=(const TimedExecutor& o) const noexcept { return !(*this == o); }

  // The time counted in `spent` so far, with the part of the function
  // running now: a handler measuring itself before it returns (its
  // throttle goes in the response it is writing) would otherwise count
  // none of its last run.
  static Clock::duration spent_so_far(const Clock::duration& spent) {
    Clock::duration total = spent;
    if (running_ && running_->spent == &spent) total += Clock::now() - running_->start - running_->inner;
    return total;
  }

 private:
  // The timed function running on this thread now; a nested one adds its
  // time to the outer's `inner` so it is not counted twice.
  struct Running {
    Clock::time_point start;
    Clock::duration inner{};
    Clock::duration* spent;
    Running* outer;
  };
  static inline thread_local Running* running_ = nullptr;

  template <typename F>
  struct Timed {
    F f;
    std::shared_ptr<Clock::duration> spent;
    void operator()() {
      Running self{Clock::now(), {}, spent.get(), running_};
      running_ = &self;
      struct Account {
        Running& self;
        ~Account() {
          const auto total = Clock::now() - self.start;
          running_ = self.outer;
          *self.spent += total - self.inner;
          if (self.outer) self.outer->inner += total;
        }
      } account{self};
      f();
    }
  };

  asio::any_io_executor inner_;
  std::shared_ptr<Clock::duration> spent_;
};

}  // namespace runnel::broker
