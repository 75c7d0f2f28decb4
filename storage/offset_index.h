// The offset index: <base offset>.index, sparse map from offset to the byte
// position of a batch in the segment's .log file.
//
//   entry (8 bytes, big-endian), repeated:
//     offset    size  field
//          0     4    relative offset   offset - segment base offset (int32)
//          4     4    position          byte position of a batch in .log (int32)
//
// An entry (O, P) means: the batch at position P has base offset <= O, and
// every offset > O is stored at or after P. Offsets and positions strictly
// increase. One entry is added per index.interval.bytes appended. Lookup is a
// binary search for the largest entry <= the target.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "storage/index_file.h"

namespace runnel::storage {

struct OffsetPosition {
  int64_t offset = 0;
  int64_t position = 0;
  bool operator==(const OffsetPosition&) const = default;
};

class OffsetIndex {
 public:
  static constexpr int kEntrySize = 8;

  OffsetIndex() = default;
  static Result<OffsetIndex> open(const fs::path& path, int64_t base_offset, int32_t max_index_size);

  // The largest entry with offset <= target; (base offset, 0) if none.
  OffsetPosition lookup(int64_t target) const;
  OffsetPosition entry(size_t n) const;
  // The last entry with position <= `position` and offset < `below_offset`.
  std::optional<OffsetPosition> floor_by_position(int64_t position, int64_t below_offset) const;
  OffsetPosition last_entry() const;

  bool is_full() const { return file_.entries() >= file_.max_entries(); }
  bool can_append_offset(int64_t offset) const {
    return offset >= base_offset_ && offset - base_offset_ <= INT32_MAX;
  }
  // Appends (offset, position). Offsets must increase and the index must not
  // be full: violating either is a bug in the caller (throws logic_error).
  // Errors only when the blocks behind the entry cannot be allocated (ENOSPC).
  std::error_code append(int64_t offset, int64_t position);
  // Drops every entry with offset >= `offset`.
  void truncate_to(int64_t offset);
  std::error_code reset() { return file_.reset(); }

  // Whether the content can be trusted: whole entries, offsets and positions
  // strictly increasing, offsets in [base, offset_limit), positions < log_size.
  bool sane(int64_t log_size, int64_t offset_limit) const;

  size_t entries() const { return file_.entries(); }
  int64_t base_offset() const { return base_offset_; }
  IndexFile& file() { return file_; }
  const IndexFile& file() const { return file_; }

 private:
  int64_t relative(size_t n) const { return static_cast<int32_t>(load_be32(file_.entry(n))); }
  int64_t position(size_t n) const { return static_cast<int32_t>(load_be32(file_.entry(n) + 4)); }
  // Largest slot with offset <= target, or -1.
  int64_t slot_for(int64_t target) const;

  IndexFile file_;
  int64_t base_offset_ = 0;
};

}  // namespace runnel::storage
