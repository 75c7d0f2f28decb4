#include "storage/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>

#include "storage/flush_stats.h"

namespace runnel::storage {

FileHandle& FileHandle::operator=(FileHandle&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

FileHandle::~FileHandle() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FileHandle> FileHandle::open(const fs::path& path, int flags, int mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno_code(errno);
  return FileHandle(fd);
}

std::error_code pwrite_all(int fd, const void* data, size_t n, int64_t offset) {
  auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, offset);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno_code(errno);
    }
    p += w;
    n -= static_cast<size_t>(w);
    offset += w;
  }
  return {};
}

Result<size_t> pread_full(int fd, void* data, size_t n, int64_t offset) {
  auto* p = static_cast<uint8_t*>(data);
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::pread(fd, p + done, n - done, offset + static_cast<int64_t>(done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_code(errno);
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

Result<int64_t> file_size(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return errno_code(errno);
  return static_cast<int64_t>(st.st_size);
}

std::error_code truncate_fd(int fd, int64_t size) {
  while (::ftruncate(fd, size) != 0) {
    if (errno != EINTR) return errno_code(errno);
  }
  return {};
}

std::error_code allocate_fd(int fd, int64_t offset, int64_t len) {
  if (len <= 0) return {};
  int err = ::posix_fallocate(fd, offset, len);
  if (err == 0) return {};
  if (err != EOPNOTSUPP && err != EINVAL) return errno_code(err);
  static const char zeros[4096] = {};
  for (int64_t at = offset; at < offset + len;) {
    size_t n = static_cast<size_t>(std::min<int64_t>(sizeof zeros, offset + len - at));
    if (auto ec = pwrite_all(fd, zeros, n, at)) return ec;
    at += static_cast<int64_t>(n);
  }
  return {};
}

FlushStats& flush_stats() {
  static FlushStats stats;
  return stats;
}

std::error_code datasync_fd(int fd) {
  const auto start = std::chrono::steady_clock::now();
  while (::fdatasync(fd) != 0) {
    if (errno != EINTR) return errno_code(errno);
  }
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  flush_stats().flush_ms.observe(took.count(), FlushStats::kFlushBucketsMs);
  return {};
}

std::error_code fsync_dir(const fs::path& dir) {
  auto f = FileHandle::open(dir, O_RDONLY | O_DIRECTORY);
  if (!f) return f.error();
  while (::fsync(f->fd()) != 0) {
    if (errno != EINTR) return errno_code(errno);
  }
  return {};
}

std::error_code write_file_atomically(const fs::path& path, std::string_view contents) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    auto f = FileHandle::open(tmp, O_WRONLY | O_CREAT | O_TRUNC);
    if (!f) return f.error();
    if (auto ec = pwrite_all(f->fd(), contents.data(), contents.size(), 0)) return ec;
    while (::fsync(f->fd()) != 0) {
      if (errno != EINTR) return errno_code(errno);
    }
  }
  if (auto ec = rename_path(tmp, path)) return ec;
  return fsync_dir(path.parent_path().empty() ? fs::path(".") : path.parent_path());
}

Result<std::string> read_whole_file(const fs::path& path) {
  auto f = FileHandle::open(path, O_RDONLY);
  if (!f) return f.error();
  std::string out;
  char buf[4096];
  int64_t off = 0;
  for (;;) {
    auto n = pread_full(f->fd(), buf, sizeof buf, off);
    if (!n) return n.error();
    out.append(buf, *n);
    off += static_cast<int64_t>(*n);
    if (*n < sizeof buf) return out;
  }
}

std::error_code rename_path(const fs::path& from, const fs::path& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) return errno_code(errno);
  return {};
}

std::error_code remove_if_exists(const fs::path& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) return errno_code(errno);
  return {};
}

}  // namespace runnel::storage
