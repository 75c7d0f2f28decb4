// Thin POSIX file helpers: every failure comes back as an error_code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "storage/errors.h"

namespace runnel::storage {

namespace fs = std::filesystem;

// Owns one file descriptor and closes it on destruction.
class FileHandle {
 public:
  FileHandle() = default;
  explicit FileHandle(int fd) : fd_(fd) {}
  FileHandle(FileHandle&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  FileHandle& operator=(FileHandle&& o) noexcept;
  FileHandle(const FileHandle&) = delete;
  FileHandle& operator=(const FileHandle&) = delete;
  ~FileHandle();

  // open(2) with O_CLOEXEC added.
  static Result<FileHandle> open(const fs::path& path, int flags, int mode = 0644);

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Writes all `n` bytes at `offset`, retrying short writes and EINTR.
std::error_code pwrite_all(int fd, const void* data, size_t n, int64_t offset);
// Reads up to `n` bytes at `offset`; fewer only at end of file.
Result<size_t> pread_full(int fd, void* data, size_t n, int64_t offset);
Result<int64_t> file_size(int fd);
std::error_code truncate_fd(int fd, int64_t size);
// Makes [offset, offset + len) of the file backed by disk blocks (growing it
// if needed), so that writes through a memory map of it cannot raise SIGBUS
// on a full disk: ENOSPC comes back here instead. Writes zeros where the file
// system cannot fallocate.
std::error_code allocate_fd(int fd, int64_t offset, int64_t len);
std::error_code datasync_fd(int fd);
// fsync of a directory, so that created, renamed and removed entries persist.
std::error_code fsync_dir(const fs::path& dir);

// Replaces `path` with `contents` so that a crash leaves the old file or the
// new one, never a mix: write `path`.tmp, fsync it, rename, fsync the dir.
std::error_code write_file_atomically(const fs::path& path, std::string_view contents);
Result<std::string> read_whole_file(const fs::path& path);

// rename(2) / unlink(2); removing a missing file is not an error.
std::error_code rename_path(const fs::path& from, const fs::path& to);
std::error_code remove_if_exists(const fs::path& path);

}  // namespace runnel::storage
