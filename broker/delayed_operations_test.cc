#include <catch2/catch.hpp>

#include "broker/delayed_operations.h"

using namespace runnel::broker;
using namespace std::chrono_literals;
using Clock = DelayedOperations::Clock;

namespace {

// Completes when `ready` is set; records how it completed.
class Flag final : public DelayedOperation {
 public:
  explicit Flag(const bool& ready, int& completions, int& expirations)
      : ready_(ready), completions_(completions), expirations_(expirations) {}

 protected:
  bool try_complete() override { return ready_; }
  void on_complete(bool expired) override { ++(expired ? expirations_ : completions_); }

 private:
  const bool& ready_;
  int& completions_;
  int& expirations_;
};

struct Fixture {
  asio::io_context io;
  DelayedOperations purgatory{io.get_executor()};
  bool ready = false;
  int completions = 0;
  int expirations = 0;

  std::shared_ptr<Flag> flag() { return std::make_shared<Flag>(ready, completions, expirations); }
  void run_for(std::chrono::milliseconds d) {
    io.restart();
    io.run_for(d);
  }
};

}  // namespace

TEST_CASE("an operation that can complete at once is never watched", "[delayed]") {
  Fixture f;
  WatchList list;
  WatchList* lists[] = {&list};
  f.ready = true;
  REQUIRE(f.purgatory.try_complete_else_watch(f.flag(), lists, Clock::now() + 1h));
  REQUIRE(f.completions == 1);
  REQUIRE(list.size() == 0);
  REQUIRE(f.purgatory.waiting() == 0);
}

TEST_CASE("a check of a watched list completes the operation once and drops it everywhere", "[delayed]") {
  Fixture f;
  WatchList a, b;
  WatchList* lists[] = {&a, &b};
  auto op = f.flag();
  REQUIRE_FALSE(f.purgatory.try_complete_else_watch(op, lists, Clock::now() + 1h));
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  REQUIRE(f.purgatory.waiting() == 1);

  REQUIRE(a.check_and_complete() == 0);  // not ready yet: still waiting
  REQUIRE(a.size() == 1);

  f.ready = true;
  REQUIRE(b.check_and_complete() == 1);
  REQUIRE(op->completed());
  REQUIRE(f.completions == 1);
  REQUIRE(a.size() == 0);
  REQUIRE(b.size() == 0);
  REQUIRE(f.purgatory.waiting() == 0);
  REQUIRE(a.check_and_complete() == 0);
  f.run_for(50ms);  // the cancelled deadline does not expire it again
  REQUIRE(f.expirations == 0);
  REQUIRE(f.completions == 1);
}

TEST_CASE("expired operations leave their lists: idle waiters do not accumulate", "[delayed]") {
  Fixture f;
  WatchList list;
  WatchList* lists[] = {&list};
  constexpr int kWaiters = 20'000;
  const auto deadline = Clock::now() + 20ms;
  for (int i = 0; i < kWaiters; ++i) f.purgatory.try_complete_else_watch(f.flag(), lists, deadline);
  REQUIRE(list.size() == kWaiters);
  // Bounded: the deadlines are 20 ms away; stop as soon as all expired.
  const auto give_up = Clock::now() + 60s;
  while (f.expirations < kWaiters && Clock::now() < give_up) f.run_for(100ms);
  REQUIRE(f.expirations == kWaiters);
  REQUIRE(f.completions == 0);
  REQUIRE(list.size() == 0);
  REQUIRE(f.purgatory.waiting() == 0);
}

TEST_CASE("a watch list destroyed first leaves its operations waiting on the others", "[delayed]") {
  Fixture f;
  WatchList kept;
  auto gone = std::make_unique<WatchList>();
  WatchList* lists[] = {&kept, gone.get()};
  auto op = f.flag();
  f.purgatory.try_complete_else_watch(op, lists, Clock::now() + 1h);
  gone.reset();
  f.ready = true;
  REQUIRE(kept.check_and_complete() == 1);
  REQUIRE(f.completions == 1);
}

TEST_CASE("expire_all completes every waiter as expired", "[delayed]") {
  Fixture f;
  WatchList list;
  WatchList* lists[] = {&list};
  for (int i = 0; i < 3; ++i) f.purgatory.try_complete_else_watch(f.flag(), lists, Clock::now() + 1h);
  f.purgatory.expire_all();
  REQUIRE(f.expirations == 3);
  REQUIRE(list.size() == 0);
  REQUIRE(f.purgatory.waiting() == 0);
}

TEST_CASE("wait_until resumes on a check or at the deadline", "[delayed]") {
  Fixture f;
  WatchList list;
  WatchList* lists[] = {&list};
  std::optional<bool> woken_by_check, woken_by_deadline;
  bool ready = false;
  asio::co_spawn(
      f.io,
      [&]() -> awaitable<void> {
        woken_by_check = co_await wait_until(f.purgatory, lists, Clock::now() + 1h, [&] { return ready; });
      },
      asio::detached);
  asio::co_spawn(
      f.io,
      [&]() -> awaitable<void> {
        woken_by_deadline = co_await wait_until(f.purgatory, lists, Clock::now() + 500ms, [] { return false; });
      },
      asio::detached);
  f.io.poll();  // both start and wait; neither deadline can have passed while nothing blocked
  REQUIRE(list.size() == 2);
  ready = true;
  REQUIRE(list.check_and_complete() == 1);
  REQUIRE_FALSE(woken_by_check);  // resumes through the executor, not inside the check
  const auto give_up = Clock::now() + 30s;
  while ((!woken_by_check || !woken_by_deadline) && Clock::now() < give_up) f.run_for(20ms);
  REQUIRE(woken_by_check == true);
  REQUIRE(woken_by_deadline == false);
  REQUIRE(list.size() == 0);
  REQUIRE(f.purgatory.waiting() == 0);
}
