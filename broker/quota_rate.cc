#include "broker/quota_rate.h"

#include <algorithm>
#include <cmath>

namespace runnel::broker {

QuotaRate::Sample& QuotaRate::current(int64_t now_ms) {
  if (samples_.empty()) samples_.push_back({0, now_ms});
  return samples_[current_];
}

void QuotaRate::record(double value, int64_t now_ms, const QuotaWindow& w) {
  Sample* sample = &current(now_ms);
  if (now_ms - sample->start_ms >= w.window_ms) {
    // Kafka's SampledStat.advance: the next sample, reused once all exist.
    current_ = (current_ + 1) % static_cast<size_t>(std::max(1, w.samples));
    if (current_ >= samples_.size()) {
      samples_.push_back({0, now_ms});
      current_ = samples_.size() - 1;
    } else {
      samples_[current_] = {0, now_ms};
    }
    sample = &samples_[current_];
  }
  sample->value += value;
}

void QuotaRate::purge_obsolete(int64_t now_ms, const QuotaWindow& w) {
  const int64_t expire_age = static_cast<int64_t>(w.samples) * w.window_ms;
  for (auto& s : samples_)
    if (now_ms - s.start_ms >= expire_age) s = {0, now_ms};
}

int64_t QuotaRate::window_size_ms(int64_t now_ms, const QuotaWindow& w) {
  purge_obsolete(now_ms, w);
  int64_t oldest = now_ms;
  for (const auto& s : samples_) oldest = std::min(oldest, s.start_ms);
  int64_t elapsed = now_ms - oldest;
  const int64_t full_windows = elapsed / w.window_ms;
  const int64_t min_full_windows = w.samples - 1;
  if (full_windows < min_full_windows) elapsed += (min_full_windows - full_windows) * w.window_ms;
  return elapsed;
}

double QuotaRate::measure(int64_t now_ms, const QuotaWindow& w) {
  purge_obsolete(now_ms, w);
  double sum = 0;
  for (const auto& s : samples_) sum += s.value;
  const int64_t window = window_size_ms(now_ms, w);
  return window > 0 ? sum / (static_cast<double>(window) / 1000.0) : 0;
}

int64_t QuotaRate::throttle_ms(double bound, int64_t now_ms, const QuotaWindow& w) {
  const double value = measure(now_ms, w);
  if (value <= bound) return 0;
  const int64_t window = window_size_ms(now_ms, w);
  // A quota of zero or less admits nothing: the longest wait the windows measure.
  if (bound <= 0) return static_cast<int64_t>(w.samples) * w.window_ms;
  return std::llround((value - bound) / bound * static_cast<double>(window));
}

}  // namespace runnel::broker
