#include "cli/line_reader.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace runnel::cli {

LineReader::Status LineReader::next(std::string& line, std::chrono::milliseconds wait) {
  for (;;) {
    const char* start = buf_.data() + begin_;
    const void* nl = std::memchr(start, '\n', end_ - begin_);
    if (nl) {
      size_t n = static_cast<const char*>(nl) - start;
      line.assign(start, n);
      begin_ += n + 1;
      return Status::line;
    }
    if (eof_) {
      if (begin_ == end_) return Status::eof;
      line.assign(start, end_ - begin_);
      begin_ = end_;
      return Status::line;
    }
    // Make room: move the partial line to the front, grow for long lines.
    if (begin_ > 0) {
      std::memmove(buf_.data(), start, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (end_ == buf_.size()) buf_.resize(buf_.size() * 2);
    if (wait.count() >= 0) {
      pollfd p{fd_, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(wait.count()));
      if (r == 0) return Status::timeout;
      if (r < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      if (r < 0) continue;
    }
    ssize_t k = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) throw std::runtime_error(std::string("read: ") + std::strerror(errno));
    if (k == 0) eof_ = true;
    end_ += static_cast<size_t>(k);
    bytes_read_ += static_cast<uint64_t>(k);
  }
}

}  // namespace runnel::cli
