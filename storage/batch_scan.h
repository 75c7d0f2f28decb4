// Walking the record batches of a .log file, with the checks recovery uses.
//
// A .log file is RecordBatch v2 batches back to back, exactly as appended
// (see protocol/records/batch_format.h); nothing else is in the file. A batch
// is valid when its length is sane and fits in the file, its magic is 2, its
// CRC-32C matches, and its offsets increase. baseOffset and
// partitionLeaderEpoch are outside the CRC (Kafka's design), so a damaged
// baseOffset is caught only by the offset checks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "protocol/records/batch_format.h"
#include "storage/errors.h"

namespace runnel::storage {

using protocol::ByteView;
using protocol::records::BatchHeader;

// Why a walk stopped.
enum class BatchProblem : uint8_t {
  none,        // a valid batch
  end,         // clean end of the file
  incomplete,  // a torn tail: header or body runs past the end
  bad_length,  // batchLength too small to hold a header
  bad_magic,   // magic is not 2
  bad_crc,     // CRC-32C mismatch
  bad_offsets, // offsets out of order, negative deltas or counts
};

struct HeaderAt {
  BatchHeader header;
  BatchProblem problem = BatchProblem::none;
};

// Reads and frame-checks the batch header at `position` of a file whose
// readable size is `end`. No CRC check.
Result<HeaderAt> read_header_at(int fd, int64_t position, int64_t end);

// The header of the batch at the front of `bytes` held in memory (an
// append's), if it frames a whole batch: magic 2, a sane length, a
// non-negative last offset delta, not running past the end. No CRC check.
std::optional<BatchHeader> frame_batch(ByteView bytes);

// Sequential, buffered walk over whole batches, checking each one fully.
class BatchScanner {
 public:
  // `min_base_offset`: the first batch must have baseOffset >= it;
  // `max_last_offset`: every batch must end at or before it.
  BatchScanner(int fd, int64_t start, int64_t end, int64_t min_base_offset, int64_t max_last_offset);

  // The next valid batch, or nullopt where the walk stops (see problem()).
  Result<std::optional<BatchHeader>> next();
  // The bytes of the batch next() returned.
  ByteView batch() const { return {buf_.data() + cur_, cur_size_}; }
  // Start of the batch next() returned; after a stop, the end of the valid bytes.
  int64_t position() const { return pos_; }
  int64_t next_position() const { return pos_ + static_cast<int64_t>(cur_size_); }
  BatchProblem problem() const { return problem_; }

 private:
  std::error_code fill(int64_t at, size_t need);

  int fd_;
  int64_t end_;
  int64_t pos_;
  size_t cur_size_ = 0;
  int64_t next_min_offset_;
  int64_t max_last_offset_;
  BatchProblem problem_ = BatchProblem::none;
  std::vector<uint8_t> buf_;
  int64_t buf_start_ = 0;  // file position of buf_[0]
  size_t cur_ = 0;         // index of the current batch in buf_
};

}  // namespace runnel::storage
