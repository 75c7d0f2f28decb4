#include "broker/group/purgatory_timer.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <vector>

using namespace runnel::broker;
using namespace runnel::broker::group;

namespace {

int64_t now_ms() { return runnel::Clock::system().wall_ms(); }

// Deadlines only order the operations here: the purgatory's timers fire
// earliest first, so a later "last" key says everything before it is done.
struct Fixture {
  asio::io_context io;
  bool paused = false;
  PurgatoryTimer timer{io.get_executor(), runnel::Clock::system(), [this] { return paused; }};
  std::vector<std::string> ran;

  void schedule(const std::string& key, int64_t after_ms) {
    timer.schedule(key, now_ms() + after_ms, [this, key] { ran.push_back(key); });
  }
  // Runs the loop until "last" has run (bounded: a broken timer fails, never hangs).
  void run_until_last() {
    timer.schedule("last", now_ms() + 60, [this] {
      ran.push_back("last");
      io.stop();
    });
    io.restart();
    io.run_for(std::chrono::seconds(30));
    REQUIRE(!ran.empty());
    REQUIRE(ran.back() == "last");
  }
};

}  // namespace

TEST_CASE("a scheduled key runs once at its deadline and is then free", "[purgatory_timer]") {
  Fixture f;
  f.schedule("join-g", 10);
  CHECK(f.timer.pending() == 1);
  f.run_until_last();
  CHECK(f.ran == std::vector<std::string>{"join-g", "last"});
  CHECK(f.timer.pending() == 0);
}

TEST_CASE("scheduling a key again replaces it, a cancelled key never runs", "[purgatory_timer]") {
  Fixture f;
  f.timer.schedule("heartbeat-g-a", now_ms() + 10, [&f] { f.ran.push_back("first"); });
  f.timer.schedule("heartbeat-g-a", now_ms() + 20, [&f] { f.ran.push_back("second"); });
  f.schedule("sync-g", 10);
  f.timer.cancel("sync-g");
  f.timer.cancel("nothing-here");
  CHECK(f.timer.pending() == 1);
  f.run_until_last();
  CHECK(f.ran == std::vector<std::string>{"second", "last"});
}

TEST_CASE("an operation may schedule its own key again", "[purgatory_timer]") {
  Fixture f;
  int runs = 0;
  std::function<void()> periodic = [&] {
    if (++runs < 3) f.timer.schedule("expire-group-metadata", now_ms() + 1, periodic);
  };
  f.timer.schedule("expire-group-metadata", now_ms(), periodic);
  f.timer.schedule("last", now_ms() + 200, [&f] { f.io.stop(); });
  f.io.run_for(std::chrono::seconds(30));
  CHECK(runs == 3);
}

TEST_CASE("while paused, due operations are dropped, destruction runs nothing", "[purgatory_timer]") {
  int runs = 0;
  {
    Fixture f;
    f.paused = true;
    f.timer.schedule("join-g", now_ms(), [&runs] { ++runs; });
    f.timer.schedule("stop", now_ms() + 20, [&f] { f.io.stop(); });
    // "stop" is paused too: the loop ends when the purgatory has nothing left.
    f.io.run_for(std::chrono::seconds(30));
    CHECK(f.timer.pending() == 0);
    f.paused = false;
    f.timer.schedule("heartbeat-g-a", now_ms() + 3600 * 1000, [&runs] { ++runs; });
  }
  CHECK(runs == 0);
}
