#include "storage/offset_index.h"

#include <algorithm>
#include <stdexcept>

namespace runnel::storage {

Result<OffsetIndex> OffsetIndex::open(const fs::path& path, int64_t base_offset, int32_t max_index_size) {
  auto f = IndexFile::open(path, kEntrySize, max_index_size);
  if (!f) return f.error();
  OffsetIndex idx;
  idx.file_ = std::move(*f);
  idx.base_offset_ = base_offset;
  return idx;
}

int64_t OffsetIndex::slot_for(int64_t target) const {
  int64_t rel = target - base_offset_;
  int64_t lo = 0, hi = static_cast<int64_t>(file_.entries()) - 1;
  if (hi < 0 || relative(0) > rel) return -1;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (relative(static_cast<size_t>(mid)) <= rel) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

OffsetPosition OffsetIndex::lookup(int64_t target) const {
  int64_t slot = slot_for(target);
  if (slot < 0) return {base_offset_, 0};
  return entry(static_cast<size_t>(slot));
}

std::optional<OffsetPosition> OffsetIndex::floor_by_position(int64_t pos, int64_t below_offset) const {
  int64_t n = static_cast<int64_t>(file_.entries());
  if (n == 0 || position(0) > pos) return std::nullopt;
  int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (position(static_cast<size_t>(mid)) <= pos) lo = mid;
    else hi = mid - 1;
  }
  int64_t by_offset = below_offset == INT64_MIN ? -1 : slot_for(below_offset - 1);
  int64_t slot = std::min(lo, by_offset);
  if (slot < 0) return std::nullopt;
  return entry(static_cast<size_t>(slot));
}

OffsetPosition OffsetIndex::entry(size_t n) const { return {base_offset_ + relative(n), position(n)}; }

OffsetPosition OffsetIndex::last_entry() const {
  if (file_.entries() == 0) return {base_offset_, 0};
  return entry(file_.entries() - 1);
}

std::error_code OffsetIndex::append(int64_t offset, int64_t pos) {
  if (is_full()) throw std::logic_error("append to a full offset index " + file_.path().string());
  if (file_.entries() > 0 && offset <= last_entry().offset)
    throw std::logic_error("offset index append out of order in " + file_.path().string());
  if (!can_append_offset(offset) || pos < 0 || pos > INT32_MAX)
    throw std::logic_error("offset index entry out of range in " + file_.path().string());
  if (auto ec = file_.back_next_slot()) return ec;
  uint8_t* slot = file_.append_slot();
  store_be32(slot, static_cast<uint32_t>(offset - base_offset_));
  store_be32(slot + 4, static_cast<uint32_t>(pos));
  file_.commit_append();
  return {};
}

void OffsetIndex::truncate_to(int64_t offset) {
  int64_t slot = slot_for(offset);
  size_t keep;
  if (slot < 0) keep = 0;
  else if (base_offset_ + relative(static_cast<size_t>(slot)) == offset) keep = static_cast<size_t>(slot);
  else keep = static_cast<size_t>(slot) + 1;
  file_.truncate_to_entries(keep);
}

bool OffsetIndex::sane(int64_t log_size, int64_t offset_limit) const {
  if (file_.damaged() || file_.length() % kEntrySize != 0) return false;
  int64_t prev_rel = -1, prev_pos = -1;
  for (size_t i = 0; i < file_.entries(); ++i) {
    int64_t rel = relative(i), pos = position(i);
    if (rel <= prev_rel || pos <= prev_pos) return false;
    if (pos >= log_size || base_offset_ + rel >= offset_limit) return false;
    prev_rel = rel;
    prev_pos = pos;
  }
  return true;
}

}  // namespace runnel::storage
