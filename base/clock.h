// The broker's one clock. Wall-clock milliseconds date records, segments
// and producer state (Kafka's Time.milliseconds()); the steady clock times
// deadlines, which must not jump with the wall clock (Time.nanoseconds()).
// Code that needs time takes a Clock&, so tests can hold time still or
// move it by hand (ManualClock) instead of sleeping.
#pragma once

#include <chrono>
#include <cstdint>

namespace runnel {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch.
  virtual int64_t wall_ms() const = 0;
  // Milliseconds on a clock that never goes back, for deadlines and intervals.
  virtual int64_t steady_ms() const = 0;

  // The process's real clock.
  static Clock& system();
};

class SystemClock final : public Clock {
 public:
  int64_t wall_ms() const override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
  }
  int64_t steady_ms() const override {
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
  }
};

inline Clock& Clock::system() {
  static SystemClock clock;
  return clock;
}

// A clock that moves only when told: for tests of timeouts and expiry.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t wall_ms = 1'700'000'000'000, int64_t steady_ms = 0)
      : wall_(wall_ms), steady_(steady_ms) {}
  int64_t wall_ms() const override { return wall_; }
  int64_t steady_ms() const override { return steady_; }
  void advance(int64_t ms) {
    wall_ += ms;
    steady_ += ms;
  }

 private:
  int64_t wall_;
  int64_t steady_;
};

}  // namespace runnel
