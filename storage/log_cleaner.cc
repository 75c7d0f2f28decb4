// Log: compaction for cleanup.policy=compact (Kafka's LogCleaner, Cleaner
// and LogCleanerManager), one bounded pass at a time.
//
// Ranges. [log start, first dirty) was compacted before (first dirty is the
// cleaner checkpoint); [first dirty, first uncleanable) is the dirty part a
// pass reads. First uncleanable is the lowest of the active segment's base,
// the high watermark, and (min.compaction.lag.ms) the base of the first
// dirty segment holding a record newer than now - the lag.
//
// When. cleanable bytes / (clean + cleanable bytes) > min.cleanable.dirty.ratio,
// or max.compaction.lag.ms has passed for the first batch of a dirty segment
// and there are cleanable bytes. Sizes count whole segments, as Kafka does.
//
// A pass. 1) Map every key of the dirty range to its last offset, up to
// max_map_keys / max_dirty_bytes; where that stops is the pass's end offset.
// 2) Every segment below the end offset is rewritten, in groups whose total
// size fits segment.bytes: a record stays if no later record has its key
// (offset >= the map's) and it has a value or is a tombstone whose batch's
// delete horizon has not passed. A batch with a tombstone gets a delete
// horizon (now + delete.retention.ms) the first time it is cleaned:
// attribute bit 6 set and the horizon in baseTimestamp, as in Kafka 3.1+.
// Records without a key go (Kafka drops them too). Control batches stay as
// they are. A batch losing nothing is copied byte for byte; one losing
// records is rebuilt with the same baseOffset, lastOffsetDelta, leader
// epoch, producer fields, flags and codec, so offsets never change; one
// losing every record goes, except the group's last batch, which stays as an
// empty batch so that the output covers the group's whole offset range (the
// loader relies on that to finish a swap).
// 3) The swap, crash-safe like Kafka's replaceSegments: write
// <base>.log.cleaned and fsync it; rename it <base>.log.swap and fsync the
// dir; rename the replaced segments to *.deleted; rename the .swap to
// <base>.log. The new segment's indexes are rebuilt from it on open. After a
// crash the loader (recover_swap_files) finishes a swap whose .swap exists
// (deleting the segments it covers) and drops a .cleaned, which leaves the
// old segments untouched.
//
// The log's mutex is held for the whole pass; max_dirty_bytes bounds it.
#include <fcntl.h>

#include <algorithm>
#include <string>
#include <unordered_map>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"
#include "storage/log.h"

namespace runnel::storage {

namespace {

namespace rec = protocol::records;
using KeyMap = std::unordered_map<std::string, int64_t>;

std::string key_of(const rec::Record& r) { return {reinterpret_cast<const char*>(r.key->data()), r.key->size()}; }

fs::path with_suffix(const fs::path& p, const char* suffix) { return fs::path(p.string() + suffix); }

// Sets the delete-horizon attribute of a built batch and seals it again.
void set_delete_horizon_bit(protocol::Bytes& batch) {
  uint16_t attributes = static_cast<uint16_t>((batch[rec::kAttributesOffset] << 8) | batch[rec::kAttributesOffset + 1]);
  attributes |= rec::kDeleteHorizonBit;
  batch[rec::kAttributesOffset] = static_cast<uint8_t>(attributes >> 8);
  batch[rec::kAttributesOffset + 1] = static_cast<uint8_t>(attributes);
  store_be32(batch.data() + rec::kCrcOffset, rec::compute_batch_crc(batch));
}

rec::BatchSpec spec_like(const BatchHeader& h) {
  rec::BatchSpec spec;
  spec.base_offset = h.base_offset;
  spec.partition_leader_epoch = h.partition_leader_epoch;
  spec.compression = h.compression();
  spec.log_append_time = h.log_append_time();
  spec.transactional = h.is_transactional();
  spec.last_offset_delta = h.last_offset_delta;
  spec.producer_id = h.producer_id;
  spec.producer_epoch = h.producer_epoch;
  spec.base_sequence = h.base_sequence;
  return spec;
}

struct GroupOutput {
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  int64_t records_removed = 0;
};

// Writes the cleaned form of `segments` (consecutive, inactive; `limits[i]`
// is the offset after segment i) to `out_path`, fsynced.
Result<GroupOutput> rewrite_group(const std::vector<Segment*>& segments, const std::vector<int64_t>& limits,
                                  const KeyMap& map, int64_t now, const LogConfig& config,
                                  const CleanerOptions& options, const fs::path& out_path) {
  auto out = FileHandle::open(out_path, O_RDWR | O_CREAT | O_TRUNC);
  if (!out) return out.error();
  GroupOutput stats;
  protocol::Bytes buf;
  auto write_buf = [&]() -> std::error_code {
    if (auto ec = pwrite_all(out->fd(), buf.data(), buf.size(), stats.bytes_out)) return ec;
    stats.bytes_out += static_cast<int64_t>(buf.size());
    buf.clear();
    return {};
  };
  auto emit = [&](ByteView bytes) -> std::error_code {
    buf.insert(buf.end(), bytes.begin(), bytes.end());
    return buf.size() >= (1 << 20) ? write_buf() : std::error_code();
  };
  std::optional<BatchHeader> dropped_last;  // the latest batch, if it lost every record
  for (size_t i = 0; i < segments.size(); ++i) {
    Segment& s = *segments[i];
    stats.bytes_in += s.size();
    BatchScanner scan(s.log_file()->fd(), 0, s.size(), s.base_offset(), limits[i] - 1);
    for (;;) {
      auto next = scan.next();
      if (!next) return next.error();
      if (!*next) {
        if (scan.problem() != BatchProblem::end) return StorageErrc::corrupt_record;
        break;
      }
      const BatchHeader& h = **next;
      if (h.is_control()) {
        dropped_last.reset();
        if (auto ec = emit(scan.batch())) return ec;
        continue;
      }
      rec::BatchRecordReader reader(scan.batch(), options.max_decompressed_bytes);
      bool horizon_set = h.attributes & rec::kDeleteHorizonBit;
      bool retain_tombstones = !horizon_set || now < h.base_timestamp;
      std::vector<rec::Record> kept;
      bool removed = false, has_tombstone = false;
      rec::Record r;
      while (reader.next(r)) {
        int64_t offset = h.base_offset + r.offset_delta;
        bool keep = false;
        if (r.key) {
          auto it = map.find(key_of(r));
          bool latest = it == map.end() || offset >= it->second;
          keep = latest && (r.value || retain_tombstones);
        }
        if (keep) {
          has_tombstone |= !r.value;
          kept.push_back(r);
        } else {
          removed = true;
          ++stats.records_removed;
        }
      }
      if (!reader.status().ok()) return StorageErrc::corrupt_record;
      bool set_horizon = has_tombstone && !horizon_set;
      if (!removed && !set_horizon) {
        dropped_last.reset();
        if (auto ec = emit(scan.batch())) return ec;
        continue;
      }
      if (kept.empty()) {
        dropped_last = h;
        continue;
      }
      dropped_last.reset();
      rec::BatchSpec spec = spec_like(h);
      std::vector<int64_t> times;
      for (const auto& k : kept) times.push_back(h.base_timestamp + k.timestamp_delta);
      if (set_horizon) spec.base_timestamp = now + config.delete_retention_ms;
      else if (horizon_set) spec.base_timestamp = h.base_timestamp;
      else spec.base_timestamp = times.front();
      for (size_t k = 0; k < kept.size(); ++k) kept[k].timestamp_delta = times[k] - spec.base_timestamp;
      spec.max_timestamp = h.log_append_time() ? h.max_timestamp : *std::max_element(times.begin(), times.end());
      protocol::Bytes batch = rec::build_batch(spec, kept);
      if (set_horizon || horizon_set) set_delete_horizon_bit(batch);
      if (auto ec = emit(batch)) return ec;
    }
  }
  if (dropped_last) {
    // Kafka's empty batch (DefaultRecordBatch.writeEmptyHeader): offsets and producer fields only.
    rec::BatchSpec spec = spec_like(*dropped_last);
    spec.compression = rec::Compression::none;
    spec.base_timestamp = dropped_last->max_timestamp;
    spec.max_timestamp = dropped_last->max_timestamp;
    protocol::Bytes batch = rec::build_batch(spec, {});
    if (auto ec = emit(batch)) return ec;
  }
  if (auto ec = write_buf()) return ec;
  if (auto ec = datasync_fd(out->fd())) return ec;
  return stats;
}

}  // namespace

int64_t Log::first_dirty_offset() const {
  std::lock_guard lock(mu_);
  return std::max(first_dirty_offset_, log_start_offset_);
}

void Log::set_first_dirty_offset(int64_t offset) {
  std::lock_guard lock(mu_);
  first_dirty_offset_ = offset;
}

Result<CleanableInfo> Log::cleanable(int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  return cleanable_locked(now_ms);
}

Result<CleanableInfo> Log::cleanable_locked(int64_t t) {
  CleanableInfo info;
  int64_t first_dirty = std::max(first_dirty_offset_, log_start_offset_);
  if (first_dirty > log_end_offset_) first_dirty = log_start_offset_;  // a stale checkpoint, as Kafka resets it
  info.first_dirty_offset = first_dirty;
  int64_t uncleanable = std::min(active().base_offset(), high_watermark_);
  std::optional<int64_t> first_batch_ts;
  for (size_t i = floor_segment(first_dirty); i + 1 < segments_.size(); ++i) {
    Segment& s = *segments_[i];
    if (auto ec = s.ensure_indexes()) return ec;
    if (config_.min_compaction_lag_ms > 0 && s.largest_timestamp() > t - config_.min_compaction_lag_ms)
      uncleanable = std::min(uncleanable, s.base_offset());
    if (auto ts = s.first_batch_timestamp(); ts && *ts > 0)
      first_batch_ts = std::min(first_batch_ts.value_or(INT64_MAX), *ts);
  }
  info.first_uncleanable_offset = std::max(uncleanable, first_dirty);
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = *segments_[i];
    int64_t end = i + 1 < segments_.size() ? segments_[i + 1]->base_offset() : INT64_MAX;
    if (s.base_offset() < first_dirty) info.clean_bytes += s.size();
    if (end > first_dirty && s.base_offset() < info.first_uncleanable_offset) info.cleanable_bytes += s.size();
  }
  int64_t total = info.clean_bytes + info.cleanable_bytes;
  info.cleanable_ratio = total > 0 ? static_cast<double>(info.cleanable_bytes) / static_cast<double>(total) : 0.0;
  if (config_.max_compaction_lag_ms < INT64_MAX && first_batch_ts)
    info.need_compaction_now = t - *first_batch_ts > config_.max_compaction_lag_ms;
  info.due = config_.cleanup_compact && info.cleanable_bytes > 0 &&
             (info.need_compaction_now || info.cleanable_ratio > config_.min_cleanable_dirty_ratio);
  return info;
}

Result<CleanResult> Log::clean(int64_t t, const CleanerOptions& options, bool force) {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (failure_) return StorageErrc::log_dir_failed;
  CleanResult result;
  if (!config_.cleanup_compact) return result;
  auto info = cleanable_locked(t);
  if (!info) return info.error();
  if (!(info->due || (force && info->cleanable_bytes > 0))) return result;
  int64_t first_dirty = info->first_dirty_offset, uncleanable = info->first_uncleanable_offset;

  // 1. The offset map of the dirty range.
  KeyMap map;
  int64_t end = first_dirty, dirty_read = 0;
  bool full = false;
  for (size_t i = floor_segment(first_dirty); i + 1 < segments_.size() && !full; ++i) {
    Segment& s = *segments_[i];
    if (s.base_offset() >= uncleanable) break;
    BatchScanner scan(s.log_file()->fd(), 0, s.size(), s.base_offset(), segments_[i + 1]->base_offset() - 1);
    for (;;) {
      auto next = scan.next();
      if (!next) return next.error();
      if (!*next) {
        if (scan.problem() != BatchProblem::end) return StorageErrc::corrupt_record;
        break;
      }
      const BatchHeader& h = **next;
      if (h.last_offset() < first_dirty) continue;
      if (h.last_offset() >= uncleanable) {
        full = true;
        break;
      }
      if (!h.is_control()) {
        rec::BatchRecordReader reader(scan.batch(), options.max_decompressed_bytes);
        rec::Record r;
        while (reader.next(r))
          if (r.key) map[key_of(r)] = h.base_offset + r.offset_delta;
        if (!reader.status().ok()) return StorageErrc::corrupt_record;
      }
      end = h.last_offset() + 1;
      dirty_read += static_cast<int64_t>(h.total_size());
      if (map.size() >= options.max_map_keys || dirty_read >= options.max_dirty_bytes) {
        full = true;
        break;
      }
    }
  }
  if (end == first_dirty) return result;
  // The whole dirty range was mapped: the next pass starts where it ended.
  if (!full) end = uncleanable;

  // 2 and 3. Rewrite and swap every segment below `end`, group by group.
  size_t n_clean = 0;
  while (n_clean + 1 < segments_.size() && segments_[n_clean]->base_offset() < end) ++n_clean;
  result.end_offset = end;
  for (size_t first = 0; first < n_clean;) {
    size_t last = first + 1;
    int64_t group_bytes = segments_[first]->size();
    int64_t base = segments_[first]->base_offset();
    while (last < n_clean && group_bytes + segments_[last]->size() <= config_.segment_bytes &&
           segments_[last + 1]->base_offset() - 1 - base <= INT32_MAX) {
      group_bytes += segments_[last]->size();
      ++last;
    }
    size_t count = last - first;
    result.segments_in += static_cast<int>(count);
    if (group_bytes == 0) {
      first = last;
      result.segments_out += static_cast<int>(count);
      continue;
    }
    std::vector<Segment*> group;
    std::vector<int64_t> limits;
    for (size_t i = first; i < last; ++i) {
      group.push_back(segments_[i].get());
      limits.push_back(segments_[i + 1]->base_offset());
    }
    fs::path log = Segment::log_path(dir_, base);
    fs::path cleaned = with_suffix(log, Segment::kCleanedSuffix), swap = with_suffix(log, Segment::kSwapSuffix);
    auto out = rewrite_group(group, limits, map, t, config_, options, cleaned);
    if (!out) {
      (void)remove_if_exists(cleaned);
      return out.error() == StorageErrc::corrupt_record ? out.error() : fail(out.error());
    }
    result.bytes_in += out->bytes_in;
    result.bytes_out += out->bytes_out;
    result.records_removed += out->records_removed;
    using Stop = CleanerOptions::StopAfter;
    if (options.stop_after == Stop::cleaned_written) return result;
    if (auto ec = rename_path(cleaned, swap)) return fail(ec);
    if (auto ec = fsync_dir(dir_)) return fail(ec);
    if (options.stop_after == Stop::swap_renamed) return result;
    // The cleaned segment keeps the base offset, and with it its snapshot.
    if (auto ec = remove_segments(first, count, /*delay=*/true, base)) return fail(ec);
    if (options.stop_after == Stop::old_deleted) return result;
    if (auto ec = rename_path(swap, log)) return fail(ec);
    if (auto ec = fsync_dir(dir_)) return fail(ec);
    auto seg = Segment::open_existing(dir_, base, config_, t);
    if (!seg) return fail(seg.error());
    (*seg)->set_offset_limit(segments_[first]->base_offset());
    if (auto ec = (*seg)->on_become_inactive()) return fail(ec);
    segments_.insert(segments_.begin() + static_cast<ptrdiff_t>(first), std::move(*seg));
    n_clean -= count - 1;
    ++first;
    ++result.segments_out;
  }
  first_dirty_offset_ = end;
  result.cleaned = true;
  return result;
}

// Log::load, before anything else: finishes or rolls back a swap that a
// crash interrupted (Kafka's LogLoader on .swap and .cleaned files).
std::error_code Log::recover_swap_files() {
  std::vector<int64_t> swaps;
  std::vector<std::pair<int64_t, fs::path>> logs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(Segment::kCleanedSuffix)) {
      if (auto rec = remove_if_exists(entry.path())) return rec;
    } else if (name.ends_with(std::string(".log") + Segment::kSwapSuffix) && name.size() == 20 + 9) {
      swaps.push_back(std::stoll(name.substr(0, 20)));
    } else if (name.ends_with(".log") && name.size() == 24) {
      logs.emplace_back(std::stoll(name.substr(0, 20)), entry.path());
    }
  }
  if (ec) return ec;
  for (int64_t base : swaps) {
    fs::path log = Segment::log_path(dir_, base), swap = with_suffix(log, Segment::kSwapSuffix);
    auto f = FileHandle::open(swap, O_RDONLY);
    if (!f) return f.error();
    auto size = file_size(f->fd());
    if (!size) return size.error();
    BatchScanner scan(f->fd(), 0, *size, base, INT64_MAX);
    int64_t next_offset = base;
    for (;;) {
      auto b = scan.next();
      if (!b) return b.error();
      if (!*b) break;
      next_offset = (*b)->last_offset() + 1;
    }
    if (next_offset == base) {  // nothing usable: keep the old segments
      if (auto rec = remove_if_exists(swap)) return rec;
      continue;
    }
    for (const auto& [b, path] : logs) {
      if (b < base || b >= next_offset) continue;
      for (const auto& p : {path, Segment::index_path(dir_, b), Segment::time_index_path(dir_, b)})
        if (auto rec = remove_if_exists(p)) return rec;
    }
    for (const auto& p : {Segment::index_path(dir_, base), Segment::time_index_path(dir_, base)}) {
      fs::path idx_swap = with_suffix(p, Segment::kSwapSuffix);
      if (fs::exists(idx_swap, ec)) {
        if (auto rec = rename_path(idx_swap, p)) return rec;
      }
    }
    if (auto rec = rename_path(swap, log)) return rec;
  }
  // Index .swap files left without their .log.swap belong to nothing.
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (entry.path().filename().string().ends_with(Segment::kSwapSuffix))
      if (auto rec = remove_if_exists(entry.path())) return rec;
  if (!swaps.empty())
    if (auto rec = fsync_dir(dir_)) return rec;
  return ec;
}

}  // namespace runnel::storage
