#include "storage/leader_epoch_cache.h"

#include <stdexcept>
#include <utility>

namespace runnel::storage {

Result<LeaderEpochCache> LeaderEpochCache::load(const fs::path& partition_dir) {
  LeaderEpochCache cache;
  cache.file_ = partition_dir / kLeaderEpochCheckpointFile;
  auto entries = read_leader_epoch_checkpoint(cache.file_);
  if (!entries) {
    // A damaged cache is rebuilt from the batches' epochs during recovery.
    if (entries.error() != StorageErrc::corrupt_checkpoint) return entries.error();
    return cache;
  }
  for (const auto& e : *entries)
    if (e.epoch >= 0 && e.start_offset >= 0) {
      // The same monotonic rule as assign(), without a write per entry.
      while (!cache.entries_.empty() &&
             (cache.entries_.back().epoch >= e.epoch || cache.entries_.back().start_offset >= e.start_offset))
        cache.entries_.pop_back();
      cache.entries_.push_back(e);
    }
  cache.persisted_ = *entries;
  return cache;
}

std::error_code LeaderEpochCache::persist() {
  if (file_.empty() || deferred_ || entries_ == persisted_) return {};
  if (auto ec = write_leader_epoch_checkpoint(file_, entries_)) return ec;
  persisted_ = entries_;
  return {};
}

std::error_code LeaderEpochCache::end_deferral() {
  deferred_ = false;
  return persist();
}

std::error_code LeaderEpochCache::assign(int32_t epoch, int64_t start_offset) {
  if (epoch < 0 || start_offset < 0) throw std::logic_error("invalid leader epoch entry");
  if (!entries_.empty() && entries_.back().epoch == epoch && entries_.back().start_offset <= start_offset) return {};
  while (!entries_.empty() && (entries_.back().epoch >= epoch || entries_.back().start_offset >= start_offset))
    entries_.pop_back();
  entries_.push_back({epoch, start_offset});
  return persist();
}

std::error_code LeaderEpochCache::truncate_from_end(int64_t end_offset) {
  if (end_offset < 0 || entries_.empty() || entries_.back().start_offset < end_offset) return {};
  while (!entries_.empty() && entries_.back().start_offset >= end_offset) entries_.pop_back();
  return persist();
}

std::error_code LeaderEpochCache::truncate_from_start(int64_t start_offset) {
  size_t removed = 0;
  while (removed < entries_.size() && entries_[removed].start_offset <= start_offset) ++removed;
  if (removed == 0) return {};
  EpochEntry kept{entries_[removed - 1].epoch, start_offset};
  entries_.erase(entries_.begin(), entries_.begin() + static_cast<ptrdiff_t>(removed));
  entries_.insert(entries_.begin(), kept);
  return persist();
}

std::error_code LeaderEpochCache::clear() {
  entries_.clear();
  return persist();
}

std::optional<EpochEntry> LeaderEpochCache::latest_entry() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back();
}

std::optional<EpochEntry> LeaderEpochCache::earliest_entry() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.front();
}

std::optional<int32_t> LeaderEpochCache::latest_epoch() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back().epoch;
}

std::optional<int32_t> LeaderEpochCache::epoch_for_offset(int64_t offset) const {
  std::optional<int32_t> previous;
  for (const auto& e : entries_) {
    if (e.start_offset == offset) return e.epoch;
    if (e.start_offset > offset) return previous;
    previous = e.epoch;
  }
  return previous;
}

std::pair<int32_t, int64_t> LeaderEpochCache::end_offset_for(int32_t requested, int64_t log_end_offset) const {
  if (requested < 0) return {-1, -1};
  if (!entries_.empty() && entries_.back().epoch == requested) return {requested, log_end_offset};
  const EpochEntry* floor = nullptr;
  const EpochEntry* higher = nullptr;
  for (const auto& e : entries_) {
    if (e.epoch <= requested) floor = &e;
    else if (!higher) higher = &e;
  }
  if (!higher) return {-1, -1};
  if (!floor) return {requested, higher->start_offset};
  return {floor->epoch, higher->start_offset};
}

}  // namespace runnel::storage
