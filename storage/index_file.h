// A preallocated, memory-mapped file of fixed-size entries: what .index and
// .timeindex have in common (Kafka's AbstractIndex).
//
// A new file is preallocated to max_index_size rounded down to a whole number
// of entries, so appends never grow it; entries() counts the valid ones.
// Preallocated as Kafka's are: the file has its full size but is sparse, so
// an idle partition costs no disk for its indexes. A sparse page of a map
// that a full file system cannot back raises SIGBUS when written, so the
// blocks behind the next slot are allocated (fallocate, a chunk at a time)
// before an append writes it: a full disk is then ENOSPC from
// back_next_slot(), never a signal. When its segment stops being active
// (roll, close) the file is trimmed to exactly entries() * entry_size, as
// Kafka does, so an inactive index file holds only real entries. An existing
// file is opened assuming that: entries() starts as file size / entry size,
// and the owner sanity-checks the content.
//
// Entries are big-endian. Not thread-safe: the owning segment serialises use.
#pragma once

#include <cstdint>
#include <filesystem>

#include "storage/errors.h"

namespace runnel::storage {

namespace fs = std::filesystem;

inline uint32_t load_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}
inline uint64_t load_be64(const uint8_t* p) { return (uint64_t{load_be32(p)} << 32) | load_be32(p + 4); }
inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}
inline void store_be64(uint8_t* p, uint64_t v) {
  store_be32(p, uint32_t(v >> 32));
  store_be32(p + 4, uint32_t(v));
}

class IndexFile {
 public:
  IndexFile() = default;
  IndexFile(IndexFile&& o) noexcept;
  IndexFile& operator=(IndexFile&& o) noexcept;
  IndexFile(const IndexFile&) = delete;
  IndexFile& operator=(const IndexFile&) = delete;
  ~IndexFile();

  // Opens `path`, creating and preallocating it if missing.
  static Result<IndexFile> open(const fs::path& path, int entry_size, int32_t max_index_size);

  size_t entries() const { return entries_; }
  size_t max_entries() const { return static_cast<size_t>(length_ / entry_size_); }
  int64_t length() const { return length_; }  // file size in bytes
  int32_t max_index_size() const { return max_index_size_; }
  int entry_size() const { return entry_size_; }
  const fs::path& path() const { return path_; }
  // The existing file could not be mapped (absurd size) and was emptied:
  // its owner must rebuild it.
  bool damaged() const { return damaged_; }

  const uint8_t* entry(size_t n) const { return map_ + n * static_cast<size_t>(entry_size_); }
  // Allocates the blocks behind the slot after the last entry (and a chunk
  // beyond it) unless they already are; call before writing append_slot().
  std::error_code back_next_slot();
  // The slot after the last entry; commit_append() makes it count.
  uint8_t* append_slot() { return map_ + entries_ * static_cast<size_t>(entry_size_); }
  void commit_append() { ++entries_; }
  // Drops the entries from the n-th on, zeroing their slots: an active
  // file stays preallocated, and what lies past its last entry must read as
  // the zero-filled tail (to the next open after a crash, to a replica
  // comparison), not as entries for records the log no longer holds.
  void truncate_to_entries(size_t n);

  // Sets the file size to `new_size` rounded down to whole entries and
  // remaps it; entries beyond the new size are dropped. On an error the file
  // and the map stay as they were.
  std::error_code resize(int64_t new_size);
  std::error_code trim_to_valid_size() { return resize(static_cast<int64_t>(entries_) * entry_size_); }
  // The file holds exactly its entries (an inactive segment's index).
  bool trimmed() const { return length_ == static_cast<int64_t>(entries_) * entry_size_; }
  // Forgets every entry and grows the file back to max_index_size.
  std::error_code reset();
  std::error_code flush();  // msync
  std::error_code rename(const fs::path& to);
  // Unmaps without trimming (the file may stay preallocated).
  void unmap();
  // Trims and unmaps; the object stays usable only for path().
  std::error_code close();

 private:
  std::error_code map(int fd);

  fs::path path_;
  int entry_size_ = 1;
  int32_t max_index_size_ = 0;
  int64_t length_ = 0;
  uint8_t* map_ = nullptr;
  size_t entries_ = 0;
  int64_t backed_ = 0;  // bytes from the start known to have blocks
  bool damaged_ = false;
};

}  // namespace runnel::storage
