// The time index: <base offset>.timeindex, sparse map from timestamp to
// offset, for ListOffsets by timestamp and time-based retention.
//
//   entry (12 bytes, big-endian), repeated:
//     offset    size  field
//          0     8    timestamp         largest batch max timestamp seen so far (ms)
//          8     4    relative offset   offset of the batch that has it - base offset
//
// An entry (T, O) means: T is the largest timestamp of any record at or
// before offset O (and the batch ending at O has it), so a record with a
// timestamp >= T is found by scanning from the batch holding O. An entry
// is only appended when the timestamp grows, so timestamps strictly increase
// and offsets never decrease. The last slot of the preallocated file is kept
// for the entry a segment gets when it is rolled or closed: the segment's
// largest timestamp, which retention.ms reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "storage/index_file.h"

namespace runnel::storage {

inline constexpr int64_t kNoTimestamp = -1;

struct TimestampOffset {
  int64_t timestamp = kNoTimestamp;
  int64_t offset = 0;
  bool operator==(const TimestampOffset&) const = default;
};

class TimeIndex {
 public:
  static constexpr int kEntrySize = 12;

  TimeIndex() = default;
  static Result<TimeIndex> open(const fs::path& path, int64_t base_offset, int32_t max_index_size);
  // The last entry of a trimmed (inactive) index file, read without mapping
  // it; (-1, base offset) for an empty file. nullopt, for the caller to
  // check the whole index, if the file cannot be read or its tail does not
  // look like entries: not a whole number of them, a timestamp not above 0
  // or not above the entry before, an offset outside [base, offset_limit)
  // or below the entry before (a zero-filled file after a power loss).
  static std::optional<TimestampOffset> read_last_entry(const fs::path& path, int64_t base_offset,
                                                        int64_t offset_limit);

  // The largest entry with timestamp <= target; (-1, base offset) if none.
  TimestampOffset lookup(int64_t target_timestamp) const;
  TimestampOffset entry(size_t n) const;
  TimestampOffset last_entry() const;

  // One slot stays free for the entry appended on roll.
  bool is_full() const { return file_.entries() + 1 >= file_.max_entries(); }
  // Appends (timestamp, offset) if the timestamp is larger than the last
  // one. A smaller offset or timestamp, or a full index without
  // `skip_full_check`, is a bug in the caller (throws logic_error). With
  // `skip_full_check` a trimmed file grows by one entry if it must.
  std::error_code maybe_append(int64_t timestamp, int64_t offset, bool skip_full_check = false);
  // Drops every entry with offset >= `offset`.
  void truncate_to(int64_t offset);
  std::error_code reset() { return file_.reset(); }

  // Whole entries, timestamps strictly increasing, offsets non-decreasing and
  // in [base, offset_limit).
  bool sane(int64_t offset_limit) const;

  size_t entries() const { return file_.entries(); }
  int64_t base_offset() const { return base_offset_; }
  IndexFile& file() { return file_; }
  const IndexFile& file() const { return file_; }

 private:
  int64_t timestamp(size_t n) const { return static_cast<int64_t>(load_be64(file_.entry(n))); }
  int64_t relative(size_t n) const { return static_cast<int32_t>(load_be32(file_.entry(n) + 8)); }

  IndexFile file_;
  int64_t base_offset_ = 0;
};

}  // namespace runnel::storage
