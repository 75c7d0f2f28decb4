// The rate a client quota is held to, measured as Kafka's quota sensors
// measure it (org.apache.kafka.common.metrics.stats.Rate over a
// WindowedSum): quota.window.num samples of quota.window.size.seconds each;
// a sample starts when the first value after the previous one's window is
// recorded; samples older than all the windows together are forgotten; the
// rate is their sum over the elapsed time, counted as at least
// quota.window.num - 1 whole windows so a new client is not judged by one
// busy moment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace runnel::broker {

// Kafka drops a quota sensor nothing was recorded into for an hour
// (Metrics' InactiveSensorExpirationTimeSeconds); Runnel looks once a minute.
constexpr int64_t kInactiveSensorMs = 3'600'000;
constexpr int64_t kSensorExpiryCheckMs = 60'000;

// Erases the entries of `sensors` (a std::map whose values carry
// last_recorded_ms) idle longer than kInactiveSensorMs, at most once every
// kSensorExpiryCheckMs (`last_check_ms` keeps when it last looked).
template <typename Map>
void expire_idle_sensors(Map& sensors, int64_t& last_check_ms, int64_t now_ms) {
  if (now_ms - last_check_ms < kSensorExpiryCheckMs) return;
  last_check_ms = now_ms;
  std::erase_if(sensors, [now_ms](const auto& s) { return now_ms - s.second.last_recorded_ms > kInactiveSensorMs; });
}

struct QuotaWindow {
  int samples = 11;          // quota.window.num
  int64_t window_ms = 1000;  // quota.window.size.seconds, in ms
};

class QuotaRate {
 public:
  void record(double value, int64_t now_ms, const QuotaWindow& w);
  // Per second.
  double measure(int64_t now_ms, const QuotaWindow& w);
  // The time the rate is measured over (Kafka's Rate.windowSize).
  int64_t window_size_ms(int64_t now_ms, const QuotaWindow& w);

  // Kafka's QuotaUtils.throttleTime for a rate over `bound`: how long the
  // client must wait for the rate to come down to it. Zero at or under it.
  int64_t throttle_ms(double bound, int64_t now_ms, const QuotaWindow& w);

 private:
  struct Sample {
    double value = 0;
    int64_t start_ms = 0;
  };
  Sample& current(int64_t now_ms);
  void purge_obsolete(int64_t now_ms, const QuotaWindow& w);

  std::vector<Sample> samples_;
  size_t current_ = 0;
};

}  // namespace runnel::broker
