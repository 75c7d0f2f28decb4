#include "storage/segment.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <stdexcept>

namespace runnel::storage {

namespace {

uint64_t next_segment_id() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

int64_t roll_jitter(const LogConfig& c) {
  if (c.segment_jitter_ms <= 0) return 0;
  static thread_local std::mt19937_64 rng(std::random_device{}());
  return static_cast<int64_t>(rng() % static_cast<uint64_t>(std::min(c.segment_jitter_ms, c.segment_ms)));
}

}  // namespace

std::string Segment::file_stem(int64_t base_offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%020lld", static_cast<long long>(base_offset));
  return buf;
}
fs::path Segment::log_path(const fs::path& dir, int64_t b) { return dir / (file_stem(b) + ".log"); }
fs::path Segment::index_path(const fs::path& dir, int64_t b) { return dir / (file_stem(b) + ".index"); }
fs::path Segment::time_index_path(const fs::path& dir, int64_t b) { return dir / (file_stem(b) + ".timeindex"); }
fs::path Segment::txn_index_path(const fs::path& dir, int64_t b) { return dir / (file_stem(b) + ".txnindex"); }

Result<std::unique_ptr<Segment>> Segment::create(const fs::path& dir, int64_t base_offset, const LogConfig& config,
                                                 int64_t now_ms) {
  auto s = create_files(dir, base_offset, config, now_ms);
  if (!s) {
    // A full disk must not leave an empty or half-allocated segment behind
    // to be loaded as the active one.
    for (const auto& p : {log_path(dir, base_offset), index_path(dir, base_offset), time_index_path(dir, base_offset),
                          txn_index_path(dir, base_offset)})
      (void)remove_if_exists(p);
  }
  return s;
}

Result<std::unique_ptr<Segment>> Segment::create_files(const fs::path& dir, int64_t base_offset,
                                                       const LogConfig& config, int64_t now_ms) {
  std::unique_ptr<Segment> s(new Segment());
  s->dir_ = dir;
  s->base_offset_ = base_offset;
  s->id_ = next_segment_id();
  s->config_ = config;
  s->max_ts_ = {kNoTimestamp, base_offset};
  for (const auto& p : {index_path(dir, base_offset), time_index_path(dir, base_offset), txn_index_path(dir, base_offset)})
    if (auto ec = remove_if_exists(p)) return ec;
  auto f = FileHandle::open(log_path(dir, base_offset), O_RDWR | O_CREAT | O_TRUNC);
  if (!f) return f.error();
  if (config.preallocate) {
    int err = ::posix_fallocate(f->fd(), 0, config.segment_bytes);
    if (err != 0 && err != EOPNOTSUPP && err != EINVAL) return errno_code(err);
  }
  s->log_ = std::make_shared<FileHandle>(std::move(*f));
  auto oi = OffsetIndex::open(index_path(dir, base_offset), base_offset, config.segment_index_bytes);
  if (!oi) return oi.error();
  s->offset_index_ = std::move(*oi);
  auto ti = TimeIndex::open(time_index_path(dir, base_offset), base_offset, config.segment_index_bytes);
  if (!ti) return ti.error();
  s->time_index_ = std::move(*ti);
  auto txn = TransactionIndex::open(txn_index_path(dir, base_offset), base_offset);
  if (!txn) return txn.error();
  s->txn_index_ = std::move(*txn);
  s->time_index_open_ = true;
  s->offset_index_checked_ = s->time_index_checked_ = true;
  s->used_ = true;
  s->created_ms_ = now_ms;
  s->roll_jitter_ms_ = roll_jitter(config);
  return s;
}

Result<std::unique_ptr<Segment>> Segment::open_existing(const fs::path& dir, int64_t base_offset,
                                                        const LogConfig& config, int64_t now_ms, bool lazy) {
  std::unique_ptr<Segment> s(new Segment());
  s->dir_ = dir;
  s->base_offset_ = base_offset;
  s->id_ = next_segment_id();
  s->config_ = config;
  s->max_ts_ = {kNoTimestamp, base_offset};
  std::error_code ec;
  auto size = fs::file_size(log_path(dir, base_offset), ec);
  if (ec) return ec;
  s->size_ = static_cast<int64_t>(size);
  bool missing = !fs::exists(index_path(dir, base_offset), ec) || !fs::exists(time_index_path(dir, base_offset), ec);
  auto txn = TransactionIndex::open(txn_index_path(dir, base_offset), base_offset);
  if (!txn) return txn.error();
  s->txn_index_ = std::move(*txn);
  s->created_ms_ = now_ms;
  s->roll_jitter_ms_ = roll_jitter(config);
  if (lazy && !missing) return s;
  if (auto oec = s->open_time_index()) return oec;
  if (missing) {
    auto r = s->recover(/*truncate_log=*/false);
    if (!r) return r.error();
  }
  return s;
}

// --- open files

std::error_code Segment::open_files() {
  used_ = true;
  if (log_) return {};
  auto f = FileHandle::open(log_path(dir_, base_offset_), O_RDWR);
  if (!f) return f.error();
  size_t offsets = offset_index_.entries();
  auto oi = OffsetIndex::open(index_path(dir_, base_offset_), base_offset_, config_.segment_index_bytes);
  if (!oi) return oi.error();
  // A file that is not as this segment left it is checked again.
  if (oi->entries() != offsets) offset_index_checked_ = false;
  log_ = std::make_shared<FileHandle>(std::move(*f));
  offset_index_ = std::move(*oi);
  return {};
}

std::error_code Segment::open_time_index() {
  if (auto ec = open_files()) return ec;
  if (time_index_open_) return {};
  size_t times = time_index_.entries();
  auto ti = TimeIndex::open(time_index_path(dir_, base_offset_), base_offset_, config_.segment_index_bytes);
  if (!ti) return ti.error();
  if (ti->entries() != times) time_index_checked_ = false;
  time_index_ = std::move(*ti);
  time_index_open_ = true;
  return {};
}

bool Segment::release_if_idle() {
  if (!log_ || std::exchange(used_, false)) return false;
  // Only trimmed indexes close without writing; anything else (a failed
  // trim) stays open for close() to finish.
  if (!offset_index_.file().trimmed() || (time_index_open_ && !time_index_.file().trimmed())) return false;
  offset_index_.file().unmap();
  time_index_.file().unmap();
  time_index_open_ = false;
  log_.reset();
  return true;
}

void Segment::load_max_timestamp() {
  if (time_index_checked_ || max_ts_loaded_) return;
  // An inactive segment's time index ends with its largest timestamp (roll,
  // close and recover append that entry): one read, no map.
  if (!time_index_open_)
    if (auto last = TimeIndex::read_last_entry(time_index_path(dir_, base_offset_), base_offset_, offset_limit_)) {
      max_ts_ = *last;
      max_ts_loaded_ = true;
      return;
    }
  (void)ensure_time_index();
}

void Segment::set_config(const LogConfig& config) { config_ = config; }

std::error_code Segment::ensure_offset_index() {
  if (auto ec = open_files()) return ec;
  if (offset_index_checked_) return {};
  if (offset_index_.sane(size_, offset_limit_)) {
    offset_index_checked_ = true;
    return {};
  }
  // recover() marks both checked once it has rebuilt them.
  auto r = recover(/*truncate_log=*/false);
  return r ? std::error_code() : r.error();
}

std::error_code Segment::ensure_time_index() {
  if (auto ec = open_time_index()) return ec;
  if (time_index_checked_) return {};
  if (time_index_.sane(offset_limit_)) {
    time_index_checked_ = true;
    max_ts_ = time_index_.entries() > 0 ? time_index_.last_entry() : TimestampOffset{kNoTimestamp, base_offset_};
    return {};
  }
  auto r = recover(/*truncate_log=*/false);
  return r ? std::error_code() : r.error();
}

std::error_code Segment::ensure_indexes() {
  if (auto ec = ensure_offset_index()) return ec;
  return ensure_time_index();
}

// --- append

void Segment::load_rolling_timestamp() {
  if (rolling_timestamp_ || size_ == 0 || open_files()) return;
  auto h = read_header_at(log_->fd(), 0, size_);
  if (h && h->problem == BatchProblem::none) rolling_timestamp_ = h->header.max_timestamp;
}

int64_t Segment::time_waited_for_roll(int64_t now_ms, int64_t message_timestamp) {
  load_rolling_timestamp();
  int64_t ts = rolling_timestamp_.value_or(kNoTimestamp);
  if (ts >= 0) return message_timestamp - ts;
  return now_ms - created_ms_;
}

bool Segment::should_roll(const RollParams& p) {
  bool reached_roll_ms = time_waited_for_roll(p.now_ms, p.max_timestamp_in_messages) > p.max_segment_ms - roll_jitter_ms_;
  return size_ > p.max_segment_bytes - p.messages_size || (size_ > 0 && reached_roll_ms) || offset_index_.is_full() ||
         time_index_.is_full() || !offset_index_.can_append_offset(p.max_offset_in_messages);
}

std::error_code Segment::append(ByteView batches) {
  if (batches.empty()) return {};
  if (auto ec = ensure_indexes()) return ec;
  int64_t last_offset = base_offset_;
  for (size_t at = 0; at < batches.size();) {
    auto h = frame_batch(batches.subspan(at));
    if (!h) throw std::logic_error("append of bytes that are not whole batches to segment " + file_stem(base_offset_));
    last_offset = h->last_offset();
    at += h->total_size();
  }
  if (!offset_index_.can_append_offset(last_offset))
    throw std::logic_error("offset " + std::to_string(last_offset) + " does not fit segment " + file_stem(base_offset_));
  int64_t start = size_;
  if (auto ec = pwrite_all(log_->fd(), batches.data(), batches.size(), start)) {
    // Drop whatever part of the write landed, so the file ends on a batch.
    if (!config_.preallocate) (void)truncate_fd(log_->fd(), size_);
    return ec;
  }
  size_ += static_cast<int64_t>(batches.size());
  for (size_t at = 0; at < batches.size();) {
    BatchHeader h = *frame_batch(batches.subspan(at));
    int64_t position = start + static_cast<int64_t>(at);
    // The first batch's, as load_rolling_timestamp() reads it back after a
    // restart: a roll must not depend on whether the process restarted.
    if (position == 0) rolling_timestamp_ = h.max_timestamp;
    if (auto ec = index_batch(h, position)) return ec;
    at += h.total_size();
  }
  return {};
}

// Kafka's rule: an entry for a batch when more than index.interval.bytes
// lie between the last entry's batch (the file's start if none) and this
// batch. Kafka counts those bytes in a field (bytesSinceLastIndexEntry) that
// truncateTo and reopening reset to 0 and that recover() leaves as it was,
// so its replicas' indexes drift apart after a truncation or a restart.
// Runnel promises byte-identical replica files, so it derives the count
// from the index itself: the entries are then a function of the batches
// alone, the same on a leader that restarted, a follower that truncated and
// re-fetched, and one that did neither; recover() rebuilds them through
// this same rule.
std::error_code Segment::index_batch(const BatchHeader& h, int64_t position) {
  if (h.max_timestamp > max_ts_.timestamp) max_ts_ = {h.max_timestamp, h.last_offset()};
  if (position - offset_index_.last_entry().position <= config_.index_interval_bytes) return {};
  // Full only in recover() of a segment written with other index settings:
  // appends roll first (should_roll).
  if (offset_index_.is_full()) return {};
  if (auto ec = offset_index_.append(h.last_offset(), position)) return ec;
  if (!time_index_.is_full())
    if (auto ec = time_index_.maybe_append(max_ts_.timestamp, max_ts_.offset)) return ec;
  return {};
}

// --- lifecycle

std::error_code Segment::trim_log_file() {
  if (!log_) return {};
  auto actual = file_size(log_->fd());
  if (!actual) return actual.error();
  if (*actual != size_) return truncate_fd(log_->fd(), size_);
  return {};
}

Result<int64_t> Segment::truncate_to(int64_t offset, int64_t now_ms) {
  if (auto ec = ensure_indexes()) return ec;
  auto loc = translate_offset(offset);
  if (!loc) return loc.error();
  offset_index_.truncate_to(offset);
  time_index_.truncate_to(offset);
  if (auto ec = txn_index_.truncate_to(offset)) return ec;
  if (auto ec = make_active()) return ec;
  int64_t removed = 0;
  if (*loc) {
    removed = size_ - (*loc)->position;
    if (auto ec = truncate_fd(log_->fd(), (*loc)->position)) return ec;
    size_ = (*loc)->position;
  }
  if (size_ == 0) {
    created_ms_ = now_ms;
    rolling_timestamp_.reset();
  }
  max_ts_ = time_index_.entries() > 0 ? time_index_.last_entry() : TimestampOffset{kNoTimestamp, base_offset_};
  int64_t pos = offset_index_.lookup(max_ts_.offset).position;
  for (;;) {
    auto h = read_header_at(log_->fd(), pos, size_);
    if (!h) return h.error();
    if (h->problem != BatchProblem::none) break;
    if (h->header.max_timestamp > max_ts_.timestamp) max_ts_ = {h->header.max_timestamp, h->header.last_offset()};
    pos += static_cast<int64_t>(h->header.total_size());
  }
  return removed;
}

std::error_code Segment::on_become_inactive() {
  if (auto ec = ensure_indexes()) return ec;
  if (auto ec = time_index_.maybe_append(max_ts_.timestamp, max_ts_.offset, true)) return ec;
  if (auto ec = offset_index_.file().trim_to_valid_size()) return ec;
  if (auto ec = time_index_.file().trim_to_valid_size()) return ec;
  return trim_log_file();
}

std::error_code Segment::make_active() {
  if (auto ec = ensure_indexes()) return ec;
  // A closed or recovered segment's time index ends with the largest
  // timestamp so far (close, on_become_inactive and recover append it, as
  // Kafka's do), an entry appending never makes in an active segment: it
  // would stay in the middle of this one's index and not in a replica's that
  // never closed it. Every entry appending makes names an offset at or
  // below the last offset index entry's (that batch or an earlier one held
  // the largest timestamp when the entry was made); the closing one names a
  // later batch, or was not added. max_ts_ already holds what it recorded.
  int64_t keep_below = offset_index_.entries() > 0 ? offset_index_.last_entry().offset + 1 : base_offset_;
  time_index_.truncate_to(keep_below);
  if (auto ec = offset_index_.file().resize(config_.segment_index_bytes)) return ec;
  return time_index_.file().resize(config_.segment_index_bytes);
}

std::error_code Segment::flush() {
  if (auto ec = open_files()) return ec;
  if (auto ec = datasync_fd(log_->fd())) return ec;
  if (auto ec = offset_index_.file().flush()) return ec;
  if (auto ec = time_index_.file().flush()) return ec;
  return txn_index_.flush();
}

std::error_code Segment::close() {
  std::error_code first;
  auto keep = [&](std::error_code ec) {
    if (ec && !first) first = ec;
  };
  // Files closed while idle were complete: nothing is left to write.
  if (!log_) {
    txn_index_.close();
    return {};
  }
  // An unopened time index is an inactive segment's, already closed.
  if (time_index_checked_ && time_index_open_) keep(time_index_.maybe_append(max_ts_.timestamp, max_ts_.offset, true));
  keep(offset_index_.file().close());
  keep(time_index_.file().close());
  txn_index_.close();
  keep(trim_log_file());
  return first;
}

Result<std::vector<fs::path>> Segment::rename_to_deleted() {
  offset_index_.file().unmap();
  time_index_.file().unmap();
  std::vector<fs::path> out;
  for (const auto& p : {log_path(dir_, base_offset_), index_path(dir_, base_offset_), time_index_path(dir_, base_offset_)}) {
    fs::path to = p;
    to += kDeletedSuffix;
    if (auto ec = rename_path(p, to); ec && ec != std::errc::no_such_file_or_directory) return ec;
    out.push_back(to);
  }
  fs::path txn_to = txn_index_.path().string() + kDeletedSuffix;
  if (auto ec = txn_index_.rename_to(txn_to); ec && ec != std::errc::no_such_file_or_directory) return ec;
  out.push_back(txn_to);
  return out;
}

std::vector<std::shared_ptr<FileHandle>> Segment::files_to_sync() {
  std::vector<std::shared_ptr<FileHandle>> out;
  if (log_) out.push_back(log_);
  else if (auto f = FileHandle::open(log_path(dir_, base_offset_), O_RDONLY)) out.push_back(std::make_shared<FileHandle>(std::move(*f)));
  for (const auto& p : {index_path(dir_, base_offset_), time_index_path(dir_, base_offset_)}) {
    auto f = FileHandle::open(p, O_RDONLY);
    if (f) out.push_back(std::make_shared<FileHandle>(std::move(*f)));
  }
  if (txn_index_.file()) out.push_back(txn_index_.file());
  return out;
}

int64_t Segment::largest_timestamp() {
  load_max_timestamp();
  if (max_ts_.timestamp >= 0) return max_ts_.timestamp;
  struct stat st;
  if ((log_ ? ::fstat(log_->fd(), &st) : ::stat(log_path(dir_, base_offset_).c_str(), &st)) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000 + st.st_mtim.tv_nsec / 1000000;
}

}  // namespace runnel::storage
