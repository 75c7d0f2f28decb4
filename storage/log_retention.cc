// Log: deleting from the front (retention, DeleteRecords) and from the back
// (truncation for replication). Kafka's UnifiedLog deleteOldSegments,
// maybeIncrementLogStartOffset, truncateTo and truncateFullyAndStartAt.
//
// Retention removes whole segments only, oldest first, stopping at the
// first segment that must stay; the active segment is never removed, nor a
// segment holding offsets at or above the high watermark. Removed segments
// are renamed *.deleted and unlinked file.delete.delay.ms later, so fetches
// in flight finish. The third way segments change, compaction, is in
// log_cleaner.cc.
#include <algorithm>

#include "storage/log.h"

namespace runnel::storage {

void Log::maybe_increment_log_start_offset(int64_t offset) {
  if (offset <= log_start_offset_) return;
  log_start_offset_ = offset;
  (void)epochs_.truncate_from_start(log_start_offset_);
}

std::error_code Log::remove_segments(size_t first, size_t count, bool delay, int64_t keep_snapshot_at) {
  std::error_code result;
  int64_t due = now() + config_.file_delete_delay_ms;
  for (size_t i = first; i < first + count; ++i) {
    auto files = segments_[i]->rename_to_deleted();
    if (!files) {
      if (!result) result = files.error();
      continue;
    }
    // The producer snapshot at the segment's base goes with it (Kafka's
    // deleteProducerSnapshots), on the same delay.
    int64_t base = segments_[i]->base_offset();
    fs::path snapshot = producer_snapshot_path(dir_, base);
    std::error_code missing;
    if (base != keep_snapshot_at && fs::exists(snapshot, missing)) {
      fs::path to = snapshot;
      to += Segment::kDeletedSuffix;
      if (auto ec = rename_path(snapshot, to)) {
        if (!result) result = ec;
      } else {
        files->push_back(to);
      }
    }
    if (delay && config_.file_delete_delay_ms > 0) {
      pending_deletes_.push_back({std::move(*files), due});
    } else {
      for (const auto& f : *files)
        if (auto ec = remove_if_exists(f); ec && !result) result = ec;
    }
  }
  segments_.erase(segments_.begin() + static_cast<ptrdiff_t>(first),
                  segments_.begin() + static_cast<ptrdiff_t>(first + count));
  return result;
}

void Log::delete_expired_files(int64_t t) {
  auto due = [t](const PendingDelete& d) { return d.due_ms <= t; };
  for (const auto& d : pending_deletes_)
    if (due(d))
      for (const auto& f : d.files) (void)remove_if_exists(f);
  pending_deletes_.erase(std::remove_if(pending_deletes_.begin(), pending_deletes_.end(), due), pending_deletes_.end());
}

Result<int> Log::delete_segments_while(const DeletePredicate& predicate) {
  size_t n = 0;
  while (n + 1 < segments_.size()) {
    Segment& segment = *segments_[n];
    Segment* next = segments_[n + 1].get();
    if (!(high_watermark_ >= next->base_offset() && predicate(segment, next))) break;
    ++n;
  }
  if (n == 0) return 0;
  maybe_increment_log_start_offset(segments_[n]->base_offset());
  if (auto ec = remove_segments(0, n, /*delay=*/true)) return fail(ec);
  return static_cast<int>(n);
}

Result<int> Log::delete_old_segments() {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  int deleted = 0;
  auto add = [&](Result<int> r) -> std::error_code {
    if (!r) return r.error();
    deleted += *r;
    return {};
  };
  // Segments wholly below the log start offset (DeleteRecords, truncation).
  if (auto ec = add(delete_segments_while([this](Segment&, Segment* next) {
        return next && next->base_offset() <= log_start_offset_;
      })))
    return ec;
  if (config_.cleanup_delete) {
    int64_t retention_bytes = config_.retention_bytes;
    int64_t log_size = 0;
    for (const auto& s : segments_) log_size += s->size();
    if (retention_bytes >= 0 && log_size >= retention_bytes) {
      // Only whole segments that fit in the excess go.
      int64_t excess = log_size - retention_bytes;
      if (auto ec = add(delete_segments_while([&excess](Segment& s, Segment*) {
            if (excess - s.size() < 0) return false;
            excess -= s.size();
            return true;
          })))
        return ec;
    }
    if (config_.retention_ms >= 0) {
      int64_t t = now(), retention_ms = config_.retention_ms;
      if (auto ec = add(delete_segments_while([t, retention_ms](Segment& s, Segment*) {
            return t - s.largest_timestamp() > retention_ms;
          })))
        return ec;
    }
  }
  delete_expired_files(now());
  return deleted;
}

Result<int64_t> Log::delete_records(int64_t offset) {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (offset == -1) offset = high_watermark_;
  if (offset < 0 || offset > high_watermark_) return StorageErrc::offset_out_of_range;
  maybe_increment_log_start_offset(offset);
  auto deleted = delete_segments_while([this](Segment&, Segment* next) {
    return next && next->base_offset() <= log_start_offset_;
  });
  if (!deleted) return deleted.error();
  return log_start_offset_;
}

std::error_code Log::truncate_to(int64_t offset) {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (failure_) return StorageErrc::log_dir_failed;
  if (offset < 0) return StorageErrc::offset_out_of_range;
  if (offset >= log_end_offset_) return {};
  int64_t t = now();
  if (offset < segments_.front()->base_offset()) {
    if (auto ec = remove_segments(0, segments_.size(), true)) return fail(ec);
    auto seg = Segment::create(dir_, offset, config_, t);
    if (!seg) return fail(seg.error());
    segments_.push_back(std::move(*seg));
  } else {
    size_t keep = floor_segment(offset);
    // Opened before anything is removed: running short of descriptors or
    // maps is this call's error, not a failed log dir.
    if (auto ec = segments_[keep]->open_time_index()) return ec;
    if (auto ec = remove_segments(keep + 1, segments_.size() - keep - 1, true)) return fail(ec);
    active().set_offset_limit(INT64_MAX);
    auto removed = active().truncate_to(offset, t);
    if (!removed) return fail(removed.error());
  }
  auto leo = active().read_next_offset();
  if (!leo) return fail(leo.error());
  log_end_offset_ = *leo;
  high_watermark_ = std::min(high_watermark_, log_end_offset_);
  log_start_offset_ = std::min(log_start_offset_, log_end_offset_);
  if (auto ec = delete_producer_snapshots_after(dir_, log_end_offset_)) return fail(ec);
  if (auto ec = epochs_.truncate_from_end(log_end_offset_)) return fail(ec);
  group_commit_->truncated(log_end_offset_, active().log_file());
  return {};
}

std::error_code Log::truncate_fully_and_start_at(int64_t offset) {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (failure_) return StorageErrc::log_dir_failed;
  if (offset < 0) return StorageErrc::offset_out_of_range;
  if (auto ec = remove_segments(0, segments_.size(), true)) return fail(ec);
  auto seg = Segment::create(dir_, offset, config_, now());
  if (!seg) return fail(seg.error());
  segments_.push_back(std::move(*seg));
  log_end_offset_ = high_watermark_ = log_start_offset_ = offset;
  if (auto ec = delete_producer_snapshots_before(dir_, INT64_MAX)) return fail(ec);
  if (auto ec = epochs_.clear()) return fail(ec);
  group_commit_->truncated(offset, active().log_file());
  return {};
}

}  // namespace runnel::storage
