// Segment reads: offset -> position through the offset index (checking
// the batch it lands on), whole-batch ranges for fetches, and timestamp
// searches through the time index.
#include "storage/segment.h"

#include <algorithm>

namespace runnel::storage {

namespace {

int32_t epoch_of(const BatchHeader& h) { return h.partition_leader_epoch >= 0 ? h.partition_leader_epoch : -1; }

}  // namespace

// --- read

Result<std::optional<BatchLocation>> Segment::translate_once(int64_t offset, bool& suspect) {
  OffsetPosition entry = offset_index_.lookup(offset);
  bool from_index = entry.position > 0;
  int64_t pos = entry.position;
  int64_t prev_last = -1;
  for (bool first = true;; first = false) {
    auto h = read_header_at(log_->fd(), pos, size_);
    if (!h) return h.error();
    if (h->problem == BatchProblem::end) return std::optional<BatchLocation>();
    if (h->problem != BatchProblem::none || (first && from_index && h->header.base_offset > entry.offset) ||
        h->header.base_offset <= prev_last) {
      suspect = true;
      return std::optional<BatchLocation>();
    }
    if (h->header.last_offset() >= offset) return std::optional<BatchLocation>(BatchLocation{pos, h->header});
    prev_last = h->header.last_offset();
    pos += static_cast<int64_t>(h->header.total_size());
  }
}

Result<std::optional<BatchLocation>> Segment::translate_offset(int64_t offset) {
  if (auto ec = ensure_offset_index()) return ec;
  bool suspect = false;
  auto r = translate_once(offset, suspect);
  if (r && suspect && !indexes_rebuilt_) {
    // The index led somewhere that is not a batch: rebuild it once.
    indexes_rebuilt_ = true;
    auto rec = recover(/*truncate_log=*/false);
    if (!rec) return rec.error();
    suspect = false;
    r = translate_once(offset, suspect);
  }
  if (r && suspect) return StorageErrc::corrupt_record;
  return r;
}

Result<std::optional<SegmentRead>> Segment::read(int64_t offset, int64_t max_bytes, int64_t max_offset,
                                                 bool min_one_batch) {
  auto loc = translate_offset(offset);
  if (!loc) return loc.error();
  if (!*loc) return std::optional<SegmentRead>();
  const BatchHeader& first = (*loc)->header;
  SegmentRead out{(*loc)->position, 0, first.base_offset};
  int64_t first_size = static_cast<int64_t>(first.total_size());
  if (first.last_offset() >= max_offset) return std::optional<SegmentRead>(out);
  if (first_size > max_bytes && !min_one_batch) return std::optional<SegmentRead>(out);
  int64_t limit = out.position + std::max(max_bytes, first_size);
  int64_t end = out.position + first_size;
  // Jump over whole index intervals, then walk batch headers to the limit.
  if (auto jump = offset_index_.floor_by_position(limit, max_offset); jump && jump->position > end) {
    auto h = read_header_at(log_->fd(), jump->position, size_);
    if (!h) return h.error();
    if (h->problem == BatchProblem::none && h->header.base_offset <= jump->offset &&
        h->header.base_offset > first.last_offset())
      end = jump->position;
  }
  for (;;) {
    auto h = read_header_at(log_->fd(), end, size_);
    if (!h) return h.error();
    if (h->problem != BatchProblem::none) break;
    int64_t next = end + static_cast<int64_t>(h->header.total_size());
    if (next > limit || h->header.last_offset() >= max_offset) break;
    end = next;
  }
  out.length = end - out.position;
  return std::optional<SegmentRead>(out);
}

Result<std::vector<uint8_t>> Segment::read_batch_bytes(int64_t position, size_t size) {
  std::vector<uint8_t> buf(size);
  auto n = pread_full(log_->fd(), buf.data(), size, position);
  if (!n) return n.error();
  if (*n != size) return StorageErrc::corrupt_record;
  return buf;
}

Result<std::optional<TimestampAndOffset>> Segment::search_records(const BatchHeader& h, int64_t position, int64_t ts,
                                                                  int64_t starting_offset, bool exact_match) {
  using Found = std::optional<TimestampAndOffset>;
  auto matches = [&](int64_t t) { return exact_match ? t == ts : t >= ts; };
  TimestampAndOffset batch_level{h.max_timestamp, std::max(h.base_offset, starting_offset), epoch_of(h)};
  if (h.log_append_time()) return matches(h.max_timestamp) ? Found(batch_level) : Found();
  auto bytes = read_batch_bytes(position, h.total_size());
  if (!bytes) return bytes.error();
  auto times = record_times(ByteView(bytes->data(), bytes->size()));
  // A batch that does not decode is answered at batch granularity.
  if (!times) return Found(batch_level);
  for (const auto& t : *times)
    if (matches(t.timestamp) && t.offset >= starting_offset) return Found(TimestampAndOffset{t.timestamp, t.offset, epoch_of(h)});
  return Found();
}

Result<std::optional<TimestampAndOffset>> Segment::find_offset_by_timestamp(int64_t ts, int64_t starting_offset) {
  if (auto ec = ensure_indexes()) return ec;
  TimestampOffset entry = time_index_.lookup(ts);
  auto loc = translate_offset(std::max(entry.offset, starting_offset));
  if (!loc) return loc.error();
  if (!*loc) return std::optional<TimestampAndOffset>();
  int64_t pos = (*loc)->position;
  BatchHeader h = (*loc)->header;
  for (;;) {
    if (h.max_timestamp >= ts && h.last_offset() >= starting_offset) {
      auto found = search_records(h, pos, ts, starting_offset, false);
      if (!found || *found) return found;
    }
    pos += static_cast<int64_t>(h.total_size());
    auto next = read_header_at(log_->fd(), pos, size_);
    if (!next) return next.error();
    if (next->problem == BatchProblem::end) return std::optional<TimestampAndOffset>();
    if (next->problem != BatchProblem::none) return StorageErrc::corrupt_record;
    h = next->header;
  }
}

Result<std::optional<TimestampAndOffset>> Segment::find_max_timestamp() {
  if (auto ec = ensure_indexes()) return ec;
  auto loc = translate_offset(max_ts_.offset);
  if (!loc) return loc.error();
  if (!*loc) return std::optional<TimestampAndOffset>();
  int64_t pos = (*loc)->position;
  BatchHeader h = (*loc)->header;
  for (;;) {
    if (h.max_timestamp == max_ts_.timestamp) {
      auto found = search_records(h, pos, max_ts_.timestamp, h.base_offset, true);
      if (!found || *found) return found;
    }
    pos += static_cast<int64_t>(h.total_size());
    auto next = read_header_at(log_->fd(), pos, size_);
    if (!next) return next.error();
    if (next->problem == BatchProblem::end) return std::optional<TimestampAndOffset>();
    if (next->problem != BatchProblem::none) return StorageErrc::corrupt_record;
    h = next->header;
  }
}

}  // namespace runnel::storage
