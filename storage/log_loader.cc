// Log::open: loading a partition directory and recovering it after an
// unclean stop (Kafka's LogLoader).
//
// 0. A compaction swap that a crash interrupted is finished (its .swap is
//    complete) or rolled back (only a .cleaned exists): log_cleaner.cc.
// 1. Leftovers go: *.deleted files (deletions that did not finish), *.cleaned
//    (an unfinished compaction output), *.tmp, and index files without a .log.
// 2. Each .log becomes a segment; a missing index is rebuilt from it.
// 3. Unclean stop: every segment from the one holding the recovery point is
//    re-validated batch by batch; the first invalid batch and everything
//    after it (including later segments) is removed, and indexes rebuilt.
//    Clean stop: only the active segment's tail after its last index entry
//    is re-validated (cheap), and recovered the same way if it is bad.
//    The .txnindex of a recovered segment, of one that fails its sanity
//    check, and of every later segment is emptied, for the partition to
//    rebuild (Log::txn_index_rebuild_from).
// 4. Offsets follow: log end offset from the last segment, log start offset
//    from its checkpoint (at least the first segment's base), the epoch
//    cache trimmed to both.
// 5. Producer snapshots without a segment are removed; loading the producer
//    state from the rest is the partition's (replication/partition.cc).
#include <algorithm>
#include <charconv>

#include "storage/log.h"
#include "storage/partition_metadata.h"

namespace runnel::storage {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "00000000000000001000.log" -> 1000.
std::optional<int64_t> parse_base_offset(std::string_view name, std::string_view suffix) {
  if (!ends_with(name, suffix)) return std::nullopt;
  std::string_view stem = name.substr(0, name.size() - suffix.size());
  if (stem.size() != 20) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(stem.data(), stem.data() + stem.size(), v);
  if (ec != std::errc() || p != stem.data() + stem.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

Result<std::unique_ptr<Log>> Log::open(const fs::path& dir, const LogConfig& config, LogOptions options) {
  std::unique_ptr<Log> log(new Log());
  log->dir_ = dir;
  log->config_ = config;
  if (options.clock) log->clock_ = options.clock;
  log->dir_failure_ = options.dir_failure;
  if (auto ec = log->open_files(options)) {
    // A half-loaded log has no group commit yet and may hold half-rebuilt
    // indexes: it must neither sync nor trim on its way out.
    log->abandon();
    return ec;
  }
  return log;
}

std::error_code Log::open_files(const LogOptions& options) {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return ec;
  if (options.topic_id) {
    auto existing = read_partition_metadata(dir_);
    if (existing && *existing != *options.topic_id) return StorageErrc::inconsistent_cluster_id;
    if (!existing) {
      if (existing.error() != StorageErrc::not_found && existing.error() != StorageErrc::corrupt_checkpoint)
        return existing.error();
      if (auto wec = write_partition_metadata(dir_, *options.topic_id)) return wec;
    }
  }
  return load(options);
}

std::error_code Log::load(const LogOptions& options) {
  auto epochs = LeaderEpochCache::load(dir_);
  if (!epochs) return epochs.error();
  epochs_ = std::move(*epochs);
  epochs_.defer_writes();

  first_dirty_offset_ = options.cleaner_checkpoint;
  // 0. A compaction swap a crash interrupted (log_cleaner.cc).
  if (auto rec = recover_swap_files()) return rec;

  // 1. Leftovers, and the segment list.
  std::vector<int64_t> bases;
  std::vector<fs::path> indexes;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (ends_with(name, Segment::kDeletedSuffix) || ends_with(name, ".cleaned") || ends_with(name, ".tmp")) {
      if (auto rec = remove_if_exists(entry.path())) return rec;
    } else if (auto base = parse_base_offset(name, ".log")) {
      bases.push_back(*base);
    } else if (parse_base_offset(name, ".index") || parse_base_offset(name, ".timeindex") ||
               parse_base_offset(name, ".txnindex")) {
      indexes.push_back(entry.path());
    }
  }
  if (ec) return ec;
  std::sort(bases.begin(), bases.end());
  for (const auto& idx : indexes) {
    auto base = parse_base_offset(idx.filename().string(), idx.extension().string());
    if (!std::binary_search(bases.begin(), bases.end(), *base))
      if (auto rec = remove_if_exists(idx)) return rec;
  }

  // 2. Segments.
  int64_t t = now();
  for (int64_t base : bases) {
    // Only the active segment's files are opened now; the others' when used.
    auto seg = Segment::open_existing(dir_, base, config_, t, /*lazy=*/base != bases.back());
    if (!seg) return seg.error();
    segments_.push_back(std::move(*seg));
  }
  for (size_t i = 0; i + 1 < segments_.size(); ++i) segments_[i]->set_offset_limit(segments_[i + 1]->base_offset());
  check_txn_indexes();

  // 3. Recovery.
  bool recovered = false;
  if (segments_.empty()) {
    auto seg = Segment::create(dir_, std::max<int64_t>(options.log_start_offset, 0), config_, t);
    if (!seg) return seg.error();
    segments_.push_back(std::move(*seg));
  } else if (!options.clean_shutdown) {
    if (auto rec = recover_from(floor_segment(options.recovery_point), t)) return rec;
    recovered = true;
  } else {
    auto next = active().check_tail();
    if (!next) return next.error();
    if (!*next) {
      if (auto rec = recover_from(segments_.size() - 1, t)) return rec;
      recovered = true;
    }
  }
  if (auto rec = reset_untrusted_txn_indexes()) return rec;

  // 4. Offsets.
  auto leo = active().read_next_offset();
  if (!leo) return leo.error();
  log_end_offset_ = *leo;
  high_watermark_ = log_end_offset_;
  log_start_offset_ = std::min(std::max(options.log_start_offset, segments_.front()->base_offset()), log_end_offset_);
  if (auto rec = active().make_active()) return rec;
  if (auto rec = epochs_.truncate_from_end(log_end_offset_)) return rec;
  if (auto rec = epochs_.truncate_from_start(log_start_offset_)) return rec;
  if (auto rec = epochs_.end_deferral()) return rec;

  int64_t recovery_point =
      options.clean_shutdown && !recovered ? log_end_offset_ : std::min(options.recovery_point, log_end_offset_);
  recovery_point = std::max(recovery_point, segments_.front()->base_offset());
  group_commit_ = std::make_unique<GroupCommit>(dir_, active().log_file(), log_end_offset_, recovery_point);
  // Segments past the recovery point may hold bytes that never reached disk.
  std::vector<std::shared_ptr<FileHandle>> dirty;
  for (size_t i = floor_segment(recovery_point); i + 1 < segments_.size(); ++i)
    for (auto& f : segments_[i]->files_to_sync()) dirty.push_back(std::move(f));
  group_commit_->add_dirty(std::move(dirty), true);
  last_flush_ms_ = t;

  // 5. Producer snapshots that match no segment go, but the one a clean
  //    shutdown wrote at the log end offset (Kafka's removeStraySnapshots).
  std::vector<int64_t> segment_bases;
  for (const auto& s : segments_) segment_bases.push_back(s->base_offset());
  return remove_stray_producer_snapshots(dir_, segment_bases);
}

std::error_code Log::recover_from(size_t first, int64_t t) {
  // Re-validated batches re-teach the epoch cache, as Kafka does; entries
  // the recovered range might not back up are dropped first.
  if (auto ec = epochs_.truncate_from_end(segments_[first]->base_offset())) return ec;
  // As Kafka's LogSegment.recover resets the txn index of what it recovers.
  distrust_txn_indexes_from(segments_[first]->base_offset());
  auto on_batch = [this](const BatchHeader& h) {
    if (h.partition_leader_epoch >= 0 && h.partition_leader_epoch > epochs_.latest_epoch().value_or(-1))
      (void)epochs_.assign(h.partition_leader_epoch, h.base_offset);
  };
  for (size_t i = first; i < segments_.size(); ++i) {
    auto truncated = segments_[i]->recover(/*truncate_log=*/true, on_batch);
    if (!truncated) return truncated.error();
    if (*truncated > 0 && i + 1 < segments_.size()) {
      // A torn or corrupt batch ends the log: later segments cannot follow it.
      if (auto ec = remove_segments(i + 1, segments_.size() - i - 1, /*delay=*/false)) return ec;
      break;
    }
  }
  segments_.back()->set_offset_limit(INT64_MAX);
  (void)t;
  return {};
}

}  // namespace runnel::storage
