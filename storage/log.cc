#include "storage/log.h"

#include <algorithm>

#include "storage/batch_scan.h"

namespace runnel::storage {

namespace records = protocol::records;

namespace {

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}

}  // namespace

Log::~Log() { (void)close(); }

std::error_code Log::fail(std::error_code ec) {
  if (!failure_) failure_ = ec;
  if (dir_failure_) dir_failure_->mark_offline(ec);
  return ec;
}

size_t Log::floor_segment(int64_t offset) const {
  auto it = std::upper_bound(segments_.begin(), segments_.end(), offset,
                             [](int64_t o, const std::unique_ptr<Segment>& s) { return o < s->base_offset(); });
  return it == segments_.begin() ? 0 : static_cast<size_t>(it - segments_.begin()) - 1;
}

std::error_code Log::check_appendable_locked(size_t bytes) const {
  if (closed_) return StorageErrc::closed;
  if (failure_ || dir_offline()) return StorageErrc::log_dir_failed;
  if (bytes == 0) return StorageErrc::invalid_record;
  return {};
}

bool Log::appended_locked() {
  group_commit_->appended(log_end_offset_);
  return log_end_offset_ - group_commit_->synced_end() >= config_.flush_messages;
}

Result<AppendInfo> Log::append(std::span<uint8_t> batches, int32_t leader_epoch) {
  AppendInfo info;
  bool flush_now = false;
  {
    std::lock_guard lock(mu_);
    if (auto ec = check_appendable_locked(batches.size())) return ec;
    if (batches.size() > static_cast<size_t>(config_.segment_bytes)) return StorageErrc::record_batch_too_large;
    // Check the framing before touching anything.
    for (size_t at = 0; at < batches.size();) {
      auto h = frame_batch(ByteView(batches.data() + at, batches.size() - at));
      if (!h) return StorageErrc::invalid_record;
      at += h->total_size();
    }
    int64_t t = now();
    bool append_time = config_.message_timestamp_type == TimestampType::log_append_time;
    int64_t offset = log_end_offset_;
    int64_t max_ts = kNoTimestamp;
    for (size_t at = 0; at < batches.size();) {
      uint8_t* p = batches.data() + at;
      auto h = *records::read_batch_header(ByteView(p, records::kHeaderSize));
      records::set_base_offset(p, offset);
      records::set_partition_leader_epoch(p, leader_epoch);
      h.base_offset = offset;
      h.partition_leader_epoch = leader_epoch;
      if (append_time) {
        h.attributes |= records::kTimestampTypeBit;
        h.max_timestamp = t;
        records::write_batch_header(h, p);
        put_be32(p + records::kCrcOffset, records::compute_batch_crc(ByteView(p, h.total_size())));
      }
      max_ts = std::max(max_ts, h.max_timestamp);
      offset = h.last_offset() + 1;
      at += h.total_size();
    }
    info.base_offset = log_end_offset_;
    info.last_offset = offset - 1;
    info.log_append_time_ms = append_time ? t : kNoTimestamp;

    RollParams roll{config_.segment_ms,          config_.segment_bytes, max_ts, info.last_offset,
                    static_cast<int64_t>(batches.size()), t};
    if (active().should_roll(roll)) {
      bool rolled = false;
      if (auto ec = roll_locked(t, &rolled)) return fail(ec);
      if (rolled) info.rolled_at = log_end_offset_;
    }
    if (auto ec = active().append(ByteView(batches.data(), batches.size()))) return fail(ec);
    log_end_offset_ = offset;
    if (leader_epoch >= 0)
      if (auto ec = epochs_.assign(leader_epoch, info.base_offset)) return fail(ec);
    info.log_start_offset = log_start_offset_;
    flush_now = appended_locked();
  }
  if (flush_now)
    if (auto ec = sync()) return ec;
  return info;
}

Result<LogReadInfo> Log::read(int64_t offset, int64_t max_bytes, std::optional<int64_t> max_offset,
                              bool min_one_batch) {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (dir_offline()) return StorageErrc::log_dir_failed;
  if (offset < log_start_offset_ || offset > log_end_offset_) return StorageErrc::offset_out_of_range;
  LogReadInfo out;
  out.high_watermark = high_watermark_;
  out.log_start_offset = log_start_offset_;
  out.log_end_offset = log_end_offset_;
  int64_t bound = std::min(max_offset.value_or(high_watermark_), log_end_offset_);
  if (offset >= bound) return out;
  for (size_t i = floor_segment(offset); i < segments_.size(); ++i) {
    auto r = segments_[i]->read(offset, std::clamp<int64_t>(max_bytes, 0, INT32_MAX), bound, min_one_batch);
    if (!r) return r.error();
    if (!*r) continue;
    if ((*r)->length > 0) {
      const auto& file = segments_[i]->log_file();
      out.records = protocol::FileRegion{file->fd(), (*r)->position, static_cast<int32_t>((*r)->length), file};
    }
    return out;
  }
  return out;
}

Result<std::optional<TimestampAndOffset>> Log::offset_for_timestamp(int64_t timestamp) {
  using Found = std::optional<TimestampAndOffset>;
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (dir_offline()) return StorageErrc::log_dir_failed;
  if (timestamp == kEarliestTimestamp || timestamp == kEarliestLocalTimestamp) {
    auto first = epochs_.earliest_entry();
    int32_t epoch = first && first->start_offset <= log_start_offset_ ? first->epoch : -1;
    return Found(TimestampAndOffset{kNoTimestamp, log_start_offset_, epoch});
  }
  if (timestamp == kLatestTimestamp)
    return Found(TimestampAndOffset{kNoTimestamp, log_end_offset_, epochs_.latest_epoch().value_or(-1)});
  if (timestamp == kMaxTimestamp) {
    Segment* best = nullptr;
    for (auto& s : segments_)
      if (!best || s->max_timestamp_so_far().timestamp > best->max_timestamp_so_far().timestamp) best = s.get();
    return best->find_max_timestamp();
  }
  if (timestamp < 0) return Found();
  // Segments before the one that qualifies are not opened: their largest
  // timestamps are known without their files (Segment::largest_timestamp).
  for (auto& s : segments_)
    if (s->largest_timestamp() >= timestamp) return s->find_offset_by_timestamp(timestamp, log_start_offset_);
  return Found();
}

int Log::close_idle_segments() {
  std::lock_guard lock(mu_);
  if (closed_) return 0;
  int released = 0;
  for (size_t i = 0; i + 1 < segments_.size(); ++i) released += segments_[i]->release_if_idle() ? 1 : 0;
  return released;
}

std::error_code Log::sync() {
  auto ec = group_commit_->sync();
  if (ec) {
    std::lock_guard lock(mu_);
    return fail(ec);
  }
  last_flush_ms_ = now();
  return {};
}

std::error_code Log::flush_if_due(int64_t now_ms) {
  int64_t flush_ms;
  {
    std::lock_guard lock(mu_);
    if (closed_) return {};
    flush_ms = config_.flush_ms;
  }
  bool unsynced = group_commit_->written_end() > group_commit_->synced_end();
  bool due = unsynced && flush_ms != INT64_MAX && now_ms - last_flush_ms_.load() >= flush_ms;
  if (!due && !roll_needs_flush_.exchange(false)) return {};
  return sync();
}

std::error_code Log::roll() {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (failure_) return StorageErrc::log_dir_failed;
  if (auto ec = roll_locked(now())) return fail(ec);
  return {};
}

std::error_code Log::roll_locked(int64_t t, bool* rolled) {
  Segment& old = active();
  if (old.base_offset() == log_end_offset_ && old.size() == 0) return {};  // already fresh
  if (auto ec = old.on_become_inactive()) return ec;
  old.set_offset_limit(log_end_offset_);
  auto seg = Segment::create(dir_, log_end_offset_, config_, t);
  if (!seg) return seg.error();
  segments_.push_back(std::move(*seg));
  group_commit_->rolled(old.files_to_sync(), active().log_file());
  roll_needs_flush_ = true;
  if (rolled) *rolled = true;
  return {};
}

std::error_code Log::delete_snapshots_after_recovery_point_checkpoint() {
  std::lock_guard lock(mu_);
  if (closed_) return {};
  // lowerSegment(x): the last segment whose base is strictly below x.
  auto lower_base = [this](int64_t offset) -> std::optional<int64_t> {
    std::optional<int64_t> found;
    for (const auto& s : segments_)
      if (s->base_offset() < offset) found = s->base_offset();
    return found;
  };
  int64_t two_segments = lower_base(active().base_offset()).value_or(active().base_offset());
  int64_t recovery_point = group_commit_->synced_end();
  int64_t keep_from = std::min(lower_base(recovery_point).value_or(recovery_point), two_segments);
  return delete_producer_snapshots_before(dir_, keep_from);
}

std::error_code Log::assign_leader_epoch(int32_t epoch, int64_t start_offset) {
  std::lock_guard lock(mu_);
  return epochs_.assign(epoch, start_offset);
}

std::error_code Log::close() {
  bool failed;
  {
    std::lock_guard lock(mu_);
    if (closed_) return {};
    failed = static_cast<bool>(failure_);
  }
  std::error_code first = failed ? std::error_code() : sync();
  std::lock_guard lock(mu_);
  if (closed_) return first;
  closed_ = true;
  for (auto& s : segments_)
    if (auto ec = s->close(); ec && !first) first = ec;
  for (auto& d : pending_deletes_)
    for (auto& f : d.files) (void)remove_if_exists(f);
  pending_deletes_.clear();
  return first;
}

void Log::abandon_for_testing() {
  std::lock_guard lock(mu_);
  abandon();
}

void Log::abandon() {
  closed_ = true;
  segments_.clear();
}

void Log::set_config(const LogConfig& config) {
  std::lock_guard lock(mu_);
  config_ = config;
  for (auto& s : segments_) s->set_config(config);
}

int64_t Log::log_start_offset() const {
  std::lock_guard lock(mu_);
  return log_start_offset_;
}
int64_t Log::log_end_offset() const {
  std::lock_guard lock(mu_);
  return log_end_offset_;
}
bool Log::maybe_increment_high_watermark(int64_t offset) {
  std::lock_guard lock(mu_);
  offset = std::min(offset, log_end_offset_);
  if (offset <= high_watermark_) return false;
  high_watermark_ = offset;
  return true;
}

int64_t Log::high_watermark() const {
  std::lock_guard lock(mu_);
  return high_watermark_;
}
int64_t Log::recovery_point() const { return group_commit_->synced_end(); }
int64_t Log::size_bytes() const {
  std::lock_guard lock(mu_);
  int64_t n = 0;
  for (const auto& s : segments_) n += s->size();
  return n;
}
size_t Log::segment_count() const {
  std::lock_guard lock(mu_);
  return segments_.size();
}
size_t Log::open_segment_count() const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(std::count_if(segments_.begin(), segments_.end(), [](const auto& s) { return s->files_open(); }));
}
std::vector<int64_t> Log::segment_base_offsets() const {
  std::lock_guard lock(mu_);
  std::vector<int64_t> out;
  for (const auto& s : segments_) out.push_back(s->base_offset());
  return out;
}
LogConfig Log::config() const {
  std::lock_guard lock(mu_);
  return config_;
}
std::vector<EpochEntry> Log::leader_epochs() const {
  std::lock_guard lock(mu_);
  return epochs_.entries();
}
std::optional<int32_t> Log::latest_epoch() const {
  std::lock_guard lock(mu_);
  return epochs_.latest_epoch();
}
std::pair<int32_t, int64_t> Log::end_offset_for_epoch(int32_t epoch) const {
  std::lock_guard lock(mu_);
  return epochs_.end_offset_for(epoch, log_end_offset_);
}

}  // namespace runnel::storage
