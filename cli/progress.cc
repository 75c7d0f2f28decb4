#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

namespace runnel::cli {

using Clock = std::chrono::steady_clock;

Progress::Progress(const char* verb) : verb_(verb), enabled_(::isatty(2)), start_(Clock::now()), last_draw_(start_) {}

void Progress::update(uint64_t records, uint64_t bytes) {
  if (!enabled_) return;
  auto now = Clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(500)) return;
  last_draw_ = now;
  draw(records, bytes, false);
}

void Progress::finish(uint64_t records, uint64_t bytes) {
  if (enabled_ && (drawn_ || records > 0)) draw(records, bytes, true);
}

void Progress::draw(uint64_t records, uint64_t bytes, bool last) {
  double secs = std::chrono::duration<double>(Clock::now() - start_).count();
  if (secs <= 0) secs = 1e-9;
  std::fprintf(stderr, "\r%s %llu records, %.0f records/s, %.2f MB/s\033[K%s", verb_,
               static_cast<unsigned long long>(records), records / secs, bytes / secs / 1e6, last ? "\n" : "");
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace runnel::cli
