// The "records/s, MB/s" line a long produce or consume keeps on stderr when
// stderr is a terminal (redrawn in place at most twice a second).
#pragma once

#include <chrono>
#include <cstdint>

namespace runnel::cli {

class Progress {
 public:
  // `verb`: "produced" or "consumed". Draws only if stderr is a terminal.
  explicit Progress(const char* verb);
  void update(uint64_t records, uint64_t bytes);
  // The final line (with a newline) on a terminal.
  void finish(uint64_t records, uint64_t bytes);

 private:
  void draw(uint64_t records, uint64_t bytes, bool last);
  const char* verb_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace runnel::cli
