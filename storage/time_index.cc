#include "storage/time_index.h"

#include <fcntl.h>

#include <algorithm>
#include <stdexcept>

#include "storage/io.h"

namespace runnel::storage {

Result<TimeIndex> TimeIndex::open(const fs::path& path, int64_t base_offset, int32_t max_index_size) {
  auto f = IndexFile::open(path, kEntrySize, max_index_size);
  if (!f) return f.error();
  TimeIndex idx;
  idx.file_ = std::move(*f);
  idx.base_offset_ = base_offset;
  return idx;
}

TimestampOffset TimeIndex::lookup(int64_t target) const {
  int64_t n = static_cast<int64_t>(file_.entries());
  if (n == 0 || timestamp(0) > target) return {kNoTimestamp, base_offset_};
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (timestamp(static_cast<size_t>(mid)) <= target) lo = mid;
    else hi = mid - 1;
  }
  return entry(static_cast<size_t>(lo));
}

std::optional<TimestampOffset> TimeIndex::read_last_entry(const fs::path& path, int64_t base_offset,
                                                         int64_t offset_limit) {
  auto f = FileHandle::open(path, O_RDONLY);
  if (!f) return std::nullopt;
  auto size = file_size(f->fd());
  if (!size || *size % kEntrySize != 0) return std::nullopt;
  if (*size == 0) return TimestampOffset{kNoTimestamp, base_offset};
  int64_t count = std::min<int64_t>(*size / kEntrySize, 2);
  uint8_t e[2 * kEntrySize];
  auto n = pread_full(f->fd(), e, static_cast<size_t>(count * kEntrySize), *size - count * kEntrySize);
  if (!n || *n != static_cast<size_t>(count * kEntrySize)) return std::nullopt;
  auto at = [&](int64_t i) {
    const uint8_t* p = e + i * kEntrySize;
    return TimestampOffset{static_cast<int64_t>(load_be64(p)), base_offset + static_cast<int32_t>(load_be32(p + 8))};
  };
  TimestampOffset last = at(count - 1);
  if (last.timestamp <= 0 || last.offset < base_offset || last.offset >= offset_limit) return std::nullopt;
  if (count == 2) {
    TimestampOffset before = at(0);
    if (before.timestamp >= last.timestamp || before.offset > last.offset || before.offset < base_offset)
      return std::nullopt;
  }
  return last;
}

TimestampOffset TimeIndex::entry(size_t n) const { return {timestamp(n), base_offset_ + relative(n)}; }

TimestampOffset TimeIndex::last_entry() const {
  if (file_.entries() == 0) return {kNoTimestamp, base_offset_};
  return entry(file_.entries() - 1);
}

std::error_code TimeIndex::maybe_append(int64_t ts, int64_t offset, bool skip_full_check) {
  if (!skip_full_check && is_full()) throw std::logic_error("append to a full time index " + file_.path().string());
  TimestampOffset last = last_entry();
  if (file_.entries() > 0 && offset < last.offset)
    throw std::logic_error("time index offset goes backwards in " + file_.path().string());
  if (file_.entries() > 0 && ts < last.timestamp)
    throw std::logic_error("time index timestamp goes backwards in " + file_.path().string());
  if (ts <= last.timestamp) return {};
  if (file_.entries() >= file_.max_entries()) {
    if (auto ec = file_.resize(file_.length() + kEntrySize)) return ec;
  }
  if (offset < base_offset_ || offset - base_offset_ > INT32_MAX)
    throw std::logic_error("time index offset out of range in " + file_.path().string());
  if (auto ec = file_.back_next_slot()) return ec;
  uint8_t* slot = file_.append_slot();
  store_be64(slot, static_cast<uint64_t>(ts));
  store_be32(slot + 8, static_cast<uint32_t>(offset - base_offset_));
  file_.commit_append();
  return {};
}

void TimeIndex::truncate_to(int64_t offset) {
  // Entries are sorted by offset too: find the largest with offset <= target.
  int64_t rel = offset - base_offset_;
  int64_t n = static_cast<int64_t>(file_.entries());
  int64_t slot = -1;
  if (n > 0 && relative(0) <= rel) {
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
      int64_t mid = (lo + hi + 1) / 2;
      if (relative(static_cast<size_t>(mid)) <= rel) lo = mid;
      else hi = mid - 1;
    }
    slot = lo;
  }
  size_t keep;
  if (slot < 0) keep = 0;
  else if (relative(static_cast<size_t>(slot)) == rel) keep = static_cast<size_t>(slot);
  else keep = static_cast<size_t>(slot) + 1;
  file_.truncate_to_entries(keep);
}

bool TimeIndex::sane(int64_t offset_limit) const {
  if (file_.damaged() || file_.length() % kEntrySize != 0) return false;
  int64_t prev_ts = INT64_MIN, prev_rel = 0;
  for (size_t i = 0; i < file_.entries(); ++i) {
    int64_t ts = timestamp(i), rel = relative(i);
    if (i > 0 && (ts <= prev_ts || rel < prev_rel)) return false;
    if (rel < 0 || base_offset_ + rel >= offset_limit) return false;
    prev_ts = ts;
    prev_rel = rel;
  }
  return true;
}

}  // namespace runnel::storage
