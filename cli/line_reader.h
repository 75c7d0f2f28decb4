// Lines from a file descriptor (stdin or -i FILE) with a bounded wait, so
// the producer can send a lingering batch while a person types slowly
// instead of holding it until the next line arrives.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace runnel::cli {

class LineReader {
 public:
  enum class Status { line, timeout, eof };

  explicit LineReader(int fd) : fd_(fd) {}

  // The next line without its '\n' (a last line without one counts too).
  // Waits at most `wait` for more input (negative: without limit).
  Status next(std::string& line, std::chrono::milliseconds wait);
  // Input bytes consumed so far.
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  int fd_;
  std::vector<char> buf_ = std::vector<char>(1 << 16);
  size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  uint64_t bytes_read_ = 0;
};

}  // namespace runnel::cli
