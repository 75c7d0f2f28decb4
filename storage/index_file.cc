#include "storage/index_file.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <utility>

#include "storage/io.h"

namespace runnel::storage {

IndexFile::IndexFile(IndexFile&& o) noexcept
    : path_(std::move(o.path_)),
      entry_size_(o.entry_size_),
      max_index_size_(o.max_index_size_),
      length_(o.length_),
      map_(std::exchange(o.map_, nullptr)),
      entries_(o.entries_),
      damaged_(o.damaged_) {}

IndexFile& IndexFile::operator=(IndexFile&& o) noexcept {
  if (this != &o) {
    unmap();
    path_ = std::move(o.path_);
    entry_size_ = o.entry_size_;
    max_index_size_ = o.max_index_size_;
    length_ = o.length_;
    map_ = std::exchange(o.map_, nullptr);
    entries_ = o.entries_;
    damaged_ = o.damaged_;
  }
  return *this;
}

IndexFile::~IndexFile() { unmap(); }

Result<IndexFile> IndexFile::open(const fs::path& path, int entry_size, int32_t max_index_size) {
  IndexFile idx;
  idx.path_ = path;
  idx.entry_size_ = entry_size;
  idx.max_index_size_ = max_index_size;
  bool created = true;
  auto f = FileHandle::open(path, O_RDWR | O_CREAT | O_EXCL);
  if (!f && f.error() == std::errc::file_exists) {
    created = false;
    f = FileHandle::open(path, O_RDWR);
  }
  if (!f) return f.error();
  if (created) {
    int64_t size = max_index_size / entry_size * entry_size;
    if (auto ec = allocate_fd(f->fd(), 0, size)) {
      (void)truncate_fd(f->fd(), 0);
      return ec;
    }
  }
  auto size = file_size(f->fd());
  if (!size) return size.error();
  idx.length_ = *size;
  // An existing file may be sparse (an older writer); one larger than an
  // index may grow is only ever shrunk before it is written.
  if (!created && idx.length_ <= max_index_size)
    if (auto ec = allocate_fd(f->fd(), 0, idx.length_)) return ec;
  if (auto ec = idx.map(f->fd())) {
    if (created) return ec;
    // An index too large to map is garbage: start it over, to be rebuilt.
    if (auto tec = truncate_fd(f->fd(), 0)) return tec;
    idx.length_ = 0;
    idx.damaged_ = true;
  }
  idx.entries_ = created ? 0 : static_cast<size_t>(idx.length_ / entry_size);
  return idx;
}

std::error_code IndexFile::map(int fd) {
  unmap();
  if (length_ == 0) return {};
  void* p = ::mmap(nullptr, static_cast<size_t>(length_), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errno_code(errno);
  map_ = static_cast<uint8_t*>(p);
  return {};
}

void IndexFile::unmap() {
  if (map_) ::munmap(map_, static_cast<size_t>(length_));
  map_ = nullptr;
}

std::error_code IndexFile::resize(int64_t new_size) {
  int64_t rounded = new_size / entry_size_ * entry_size_;
  if (rounded == length_ && (map_ || length_ == 0)) return {};
  auto f = FileHandle::open(path_, O_RDWR);
  if (!f) return f.error();
  unmap();
  if (rounded > length_) {
    // Pages the map writes must have blocks behind them (see allocate_fd).
    if (auto ec = allocate_fd(f->fd(), length_, rounded - length_)) {
      (void)truncate_fd(f->fd(), length_);
      (void)map(f->fd());
      return ec;
    }
  } else if (auto ec = truncate_fd(f->fd(), rounded)) {
    (void)map(f->fd());
    return ec;
  }
  length_ = rounded;
  if (entries_ > max_entries()) entries_ = max_entries();
  return map(f->fd());
}

std::error_code IndexFile::reset() {
  entries_ = 0;
  damaged_ = false;
  return resize(max_index_size_);
}

std::error_code IndexFile::flush() {
  if (map_ && ::msync(map_, static_cast<size_t>(length_), MS_SYNC) != 0) return errno_code(errno);
  return {};
}

std::error_code IndexFile::rename(const fs::path& to) {
  if (auto ec = rename_path(path_, to)) return ec;
  path_ = to;
  return {};
}

std::error_code IndexFile::close() {
  auto ec = map_ || length_ != static_cast<int64_t>(entries_) * entry_size_ ? trim_to_valid_size() : std::error_code();
  unmap();
  return ec;
}

}  // namespace runnel::storage
