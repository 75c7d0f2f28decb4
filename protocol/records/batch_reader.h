// Reading batches out of a buffer, and records out of a batch.
//
// BatchIterator walks a buffer holding batches back to back (a Fetch
// response's records, a log segment) and checks only framing: each
// batchLength must cover at least the header and each batch must say magic 2.
// CRCs and records are validate_batch()'s business.
//
// BatchRecordReader decodes the records of one batch in order, decompressing
// first (Kafka compresses the whole records section as one stream).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "protocol/codec/reader.h"
#include "protocol/codec/types.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/batch_status.h"
#include "protocol/records/record.h"

namespace runnel::protocol::records {

// One complete batch inside a larger buffer.
struct BatchView {
  BatchHeader header;
  ByteView bytes;       // the whole batch: kLogOverhead + batchLength bytes
  size_t position = 0;  // where it starts in the buffer
};

class BatchIterator {
 public:
  explicit BatchIterator(ByteView buffer) : buffer_(buffer) {}

  // The next complete batch; nullopt once the buffer is used up, at a
  // partial trailing batch, or at a frame that cannot be a batch.
  std::optional<BatchView> next();

  // Bytes of complete batches yielded so far; where a partial or bad batch starts.
  size_t position() const { return position_; }
  // Non-zero when the buffer ends inside a batch. Normal for Fetch responses
  // cut at max bytes; for a log segment, the torn write to truncate away.
  size_t partial_bytes() const { return partial_bytes_; }
  // Set when next() stopped at a frame that cannot be a batch.
  const char* error() const { return error_; }

 private:
  ByteView buffer_;
  size_t position_ = 0;
  size_t partial_bytes_ = 0;
  const char* error_ = nullptr;
};

// Reads the records of one batch. Decoded records point into the batch (when
// uncompressed) or into this reader's decompressed copy: keep the reader and
// the batch alive while using them.
class BatchRecordReader {
 public:
  // Checks the framing and decompresses at most `max_decompressed_bytes`;
  // status() reports a failure. The CRC is not checked here.
  BatchRecordReader(ByteView batch, size_t max_decompressed_bytes);
  // The same, with `batch`'s header as the caller already read it.
  BatchRecordReader(ByteView batch, const BatchHeader& header, size_t max_decompressed_bytes);
  BatchRecordReader(const BatchRecordReader&) = delete;
  BatchRecordReader& operator=(const BatchRecordReader&) = delete;

  // The next record into `out`; false after the last of recordsCount records
  // or on a malformed one (status() tells which). Reading the last record
  // also checks no bytes follow it.
  bool next(Record& out);

  const BatchStatus& status() const { return status_; }
  const BatchHeader& header() const { return header_; }
  // The uncompressed records section.
  ByteView records_bytes() const { return records_; }
  int32_t records_read() const { return read_; }

 private:
  void open(ByteView batch, size_t max_decompressed_bytes);

  BatchHeader header_;
  Bytes decompressed_;
  ByteView records_;
  Reader in_{nullptr, 0};
  int32_t read_ = 0;
  BatchStatus status_;
};

}  // namespace runnel::protocol::records
