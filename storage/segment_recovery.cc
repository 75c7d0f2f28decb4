// Segment recovery: re-validating batches (length, magic, CRC, offsets),
// cutting a torn or corrupt tail and rebuilding both indexes, as Kafka's
// LogSegment.recover does.
#include "storage/segment.h"

#include <algorithm>

namespace runnel::storage {

// --- recovery

Result<std::optional<int64_t>> Segment::check_tail() {
  using Next = std::optional<int64_t>;
  if (auto ec = ensure_indexes()) return ec;
  OffsetPosition last = offset_index_.last_entry();
  if (last.position > 0) {
    auto h = read_header_at(log_->fd(), last.position, size_);
    if (!h) return h.error();
    if (h->problem != BatchProblem::none || h->header.base_offset > last.offset) return Next();
  }
  int64_t max_last = std::min(offset_limit_ - 1, base_offset_ + INT32_MAX);
  BatchScanner scan(log_->fd(), last.position, size_, last.position > 0 ? 0 : base_offset_, max_last);
  int64_t next = base_offset_;
  for (;;) {
    auto b = scan.next();
    if (!b) return b.error();
    if (!*b) break;
    next = (*b)->last_offset() + 1;
    if ((*b)->max_timestamp > max_ts_.timestamp) max_ts_ = {(*b)->max_timestamp, (*b)->last_offset()};
  }
  if (scan.problem() != BatchProblem::end) return Next();
  if (offset_index_.entries() > 0 && offset_index_.last_entry().offset >= next) return Next();
  if (time_index_.entries() > 0 && time_index_.last_entry().offset >= next) return Next();
  return Next(next);
}

Result<int64_t> Segment::recover(bool truncate_log, const std::function<void(const BatchHeader&)>& on_batch) {
  if (auto ec = open_time_index()) return ec;
  if (auto ec = offset_index_.reset()) return ec;
  if (auto ec = time_index_.reset()) return ec;
  // Checked only once rebuilt: a recovery that fails half-way is redone.
  offset_index_checked_ = time_index_checked_ = false;
  max_ts_ = {kNoTimestamp, base_offset_};
  int64_t valid = 0;
  int64_t max_last = std::min(offset_limit_ - 1, base_offset_ + INT32_MAX);
  BatchScanner scan(log_->fd(), 0, size_, base_offset_, max_last);
  for (;;) {
    auto b = scan.next();
    if (!b) return b.error();
    if (!*b) break;
    const BatchHeader& h = **b;
    if (auto ec = index_batch(h, valid)) return ec;
    valid += static_cast<int64_t>(h.total_size());
    if (on_batch) on_batch(h);
  }
  int64_t invalid = size_ - valid;
  if (truncate_log && invalid > 0) {
    if (auto ec = truncate_fd(log_->fd(), valid)) return ec;
    size_ = valid;
  }
  if (auto ec = time_index_.maybe_append(max_ts_.timestamp, max_ts_.offset, true)) return ec;
  if (auto ec = offset_index_.file().trim_to_valid_size()) return ec;
  if (auto ec = time_index_.file().trim_to_valid_size()) return ec;
  rolling_timestamp_.reset();
  offset_index_checked_ = time_index_checked_ = true;
  return invalid;
}

Result<int64_t> Segment::read_next_offset() {
  if (auto ec = open_files()) return ec;
  auto loc = translate_offset(offset_index_.last_entry().offset);
  if (!loc) return loc.error();
  if (!*loc) return base_offset_;
  int64_t pos = (*loc)->position;
  int64_t next = (*loc)->header.last_offset() + 1;
  for (;;) {
    auto h = read_header_at(log_->fd(), pos, size_);
    if (!h) return h.error();
    if (h->problem == BatchProblem::end) return next;
    if (h->problem != BatchProblem::none) return StorageErrc::corrupt_record;
    next = h->header.last_offset() + 1;
    pos += static_cast<int64_t>(h->header.total_size());
  }
}

}  // namespace runnel::storage
