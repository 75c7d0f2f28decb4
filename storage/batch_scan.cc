#include "storage/batch_scan.h"

#include <algorithm>

#include "storage/io.h"

namespace runnel::storage {

namespace records = protocol::records;

namespace {

constexpr size_t kReadChunk = 1 << 20;
constexpr int32_t kMinBatchLength = static_cast<int32_t>(records::kHeaderSize - records::kLogOverhead);

BatchProblem frame_problem(const BatchHeader& h, int64_t position, int64_t end) {
  if (h.batch_length < kMinBatchLength) return BatchProblem::bad_length;
  if (h.magic != records::kMagicV2) return BatchProblem::bad_magic;
  if (h.last_offset_delta < 0 || h.records_count < 0 || h.base_offset < 0 ||
      h.base_offset > INT64_MAX - h.last_offset_delta)
    return BatchProblem::bad_offsets;
  if (position + static_cast<int64_t>(h.total_size()) > end) return BatchProblem::incomplete;
  return BatchProblem::none;
}

}  // namespace

Result<HeaderAt> read_header_at(int fd, int64_t position, int64_t end) {
  HeaderAt out;
  if (position >= end) {
    out.problem = BatchProblem::end;
    return out;
  }
  uint8_t buf[records::kHeaderSize];
  auto n = pread_full(fd, buf, sizeof buf, position);
  if (!n) return n.error();
  if (*n < sizeof buf || end - position < static_cast<int64_t>(sizeof buf)) {
    out.problem = BatchProblem::incomplete;
    return out;
  }
  out.header = *records::read_batch_header(ByteView(buf, sizeof buf));
  out.problem = frame_problem(out.header, position, end);
  return out;
}

BatchScanner::BatchScanner(int fd, int64_t start, int64_t end, int64_t min_base_offset, int64_t max_last_offset)
    : fd_(fd), end_(end), pos_(start), next_min_offset_(min_base_offset), max_last_offset_(max_last_offset) {}

std::error_code BatchScanner::fill(int64_t at, size_t need) {
  if (at >= buf_start_ && at + static_cast<int64_t>(need) <= buf_start_ + static_cast<int64_t>(buf_.size())) return {};
  size_t want = std::max(need, kReadChunk);
  want = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(want), end_ - at));
  buf_.resize(want);
  buf_start_ = at;
  auto n = pread_full(fd_, buf_.data(), want, at);
  if (!n) return n.error();
  buf_.resize(*n);
  return {};
}

Result<std::optional<BatchHeader>> BatchScanner::next() {
  if (problem_ != BatchProblem::none) return std::optional<BatchHeader>();
  pos_ += static_cast<int64_t>(cur_size_);
  cur_size_ = 0;
  auto stop = [&](BatchProblem p) -> Result<std::optional<BatchHeader>> {
    problem_ = p;
    return std::optional<BatchHeader>();
  };
  if (pos_ >= end_) return stop(BatchProblem::end);
  if (end_ - pos_ < static_cast<int64_t>(records::kHeaderSize)) return stop(BatchProblem::incomplete);
  if (auto ec = fill(pos_, records::kHeaderSize)) return ec;
  size_t at = static_cast<size_t>(pos_ - buf_start_);
  if (buf_.size() < at + records::kHeaderSize) return stop(BatchProblem::incomplete);
  BatchHeader h = *records::read_batch_header(ByteView(buf_.data() + at, records::kHeaderSize));
  if (auto p = frame_problem(h, pos_, end_); p != BatchProblem::none) return stop(p);
  if (h.base_offset < next_min_offset_ || h.last_offset() > max_last_offset_) return stop(BatchProblem::bad_offsets);
  if (auto ec = fill(pos_, h.total_size())) return ec;
  at = static_cast<size_t>(pos_ - buf_start_);
  if (buf_.size() < at + h.total_size()) return stop(BatchProblem::incomplete);
  ByteView bytes(buf_.data() + at, h.total_size());
  if (records::compute_batch_crc(bytes) != h.crc) return stop(BatchProblem::bad_crc);
  cur_ = at;
  cur_size_ = h.total_size();
  next_min_offset_ = h.last_offset() + 1;
  return std::optional<BatchHeader>(h);
}

std::optional<BatchHeader> frame_batch(ByteView bytes) {
  auto h = protocol::records::read_batch_header(bytes);
  if (!h || h->magic != protocol::records::kMagicV2 || h->last_offset_delta < 0 ||
      h->batch_length < static_cast<int32_t>(protocol::records::kHeaderSize - protocol::records::kLogOverhead) ||
      h->total_size() > bytes.size())
    return std::nullopt;
  return h;
}

}  // namespace runnel::storage
