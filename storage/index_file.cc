#include "storage/index_file.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
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
      backed_(o.backed_),
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
    backed_ = o.backed_;
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
    // Sparse, as Kafka's RandomAccessFile.setLength leaves it.
    int64_t size = max_index_size / entry_size * entry_size;
    if (auto ec = truncate_fd(f->fd(), size)) {
      (void)truncate_fd(f->fd(), 0);
      return ec;
    }
  }
  auto size = file_size(f->fd());
  if (!size) return size.error();
  idx.length_ = *size;
  if (auto ec = idx.map(f->fd())) {
    // Out of maps or memory (vm.max_map_count) says nothing of the file.
    if (created || ec == std::errc::not_enough_memory || ec == std::errc::resource_unavailable_try_again) return ec;
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
  // Lookups are binary searches and appends touch one page: without this a
  // fault reads ahead, and on the sparse preallocated file that zero-fills
  // megabytes of page cache per segment (10,000 partitions took over 30 s
  // to close, most of it in that memset and in truncating it away again).
  (void)::madvise(p, static_cast<size_t>(length_), MADV_RANDOM);
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
  if (auto ec = truncate_fd(f->fd(), rounded)) {
    (void)map(f->fd());
    return ec;
  }
  length_ = rounded;
  backed_ = std::min(backed_, length_);
  if (entries_ > max_entries()) entries_ = max_entries();
  return map(f->fd());
}

std::error_code IndexFile::back_next_slot() {
  // A chunk at a time, so a busy index opens its file once per 8,192
  // offset entries rather than per append.
  constexpr int64_t kChunk = 64 * 1024;
  const int64_t end = static_cast<int64_t>(entries_ + 1) * entry_size_;
  if (end <= backed_) return {};
  if (end > length_) return make_error_code(std::errc::no_space_on_device);  // the caller checks fullness first
  const int64_t to = std::min(length_, std::max(end, backed_ + kChunk));
  auto f = FileHandle::open(path_, O_RDWR);
  if (!f) return f.error();
  if (auto ec = allocate_fd(f->fd(), backed_, to - backed_)) return ec;
  backed_ = to;
  return {};
}

std::error_code IndexFile::reset() {
  entries_ = 0;
  damaged_ = false;
  return resize(max_index_size_);
}

void IndexFile::truncate_to_entries(size_t n) {
  if (n >= entries_) return;
  std::memset(map_ + n * static_cast<size_t>(entry_size_), 0, (entries_ - n) * static_cast<size_t>(entry_size_));
  entries_ = n;
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
  auto ec = map_ || !trimmed() ? trim_to_valid_size() : std::error_code();
  unmap();
  return ec;
}

}  // namespace runnel::storage
