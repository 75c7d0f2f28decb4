#include "protocol/records/batch_reader.h"

#include <string>

#include "protocol/records/compression.h"

namespace runnel::protocol::records {

namespace {

// Smallest batchLength that still covers the fixed header.
constexpr int32_t kMinBatchLength = static_cast<int32_t>(kHeaderSize - kLogOverhead);

int32_t batch_length_at(const uint8_t* p) {
  Reader r(p + kBatchLengthOffset, 4);
  return r.i32();
}

}  // namespace

std::optional<BatchView> BatchIterator::next() {
  if (error_ || partial_bytes_) return std::nullopt;
  size_t left = buffer_.size() - position_;
  if (left == 0) return std::nullopt;
  if (left < kLogOverhead) {
    partial_bytes_ = left;
    return std::nullopt;
  }
  const uint8_t* at = buffer_.data() + position_;
  int32_t length = batch_length_at(at);
  if (length < kMinBatchLength) {
    error_ = "batchLength is smaller than the batch header";
    return std::nullopt;
  }
  size_t total = kLogOverhead + static_cast<size_t>(length);
  if (left < total) {
    partial_bytes_ = left;
    return std::nullopt;
  }
  BatchView batch;
  batch.header = *read_batch_header(ByteView(at, total));
  if (batch.header.magic != kMagicV2) {
    error_ = "batch magic is not 2";
    return std::nullopt;
  }
  batch.bytes = ByteView(at, total);
  batch.position = position_;
  position_ += total;
  return batch;
}

BatchRecordReader::BatchRecordReader(ByteView batch, size_t max_decompressed_bytes) {
  auto header = read_batch_header(batch);
  if (!header) {
    status_ = BatchStatus::corrupt("batch is shorter than its header");
    return;
  }
  header_ = *header;
  open(batch, max_decompressed_bytes);
}

BatchRecordReader::BatchRecordReader(ByteView batch, const BatchHeader& header, size_t max_decompressed_bytes)
    : header_(header) {
  open(batch, max_decompressed_bytes);
}

void BatchRecordReader::open(ByteView batch, size_t max_decompressed_bytes) {
  if (header_.batch_length < kMinBatchLength || header_.total_size() != batch.size()) {
    status_ = BatchStatus::corrupt("batchLength does not match the batch size");
    return;
  }
  if (header_.records_count < 0) {
    status_ = BatchStatus::invalid("negative recordsCount " + std::to_string(header_.records_count));
    return;
  }
  ByteView section = batch.subspan(kHeaderSize);
  if (header_.compression() == Compression::none) {
    records_ = section;
  } else {
    auto plain = decompress(header_.compression(), section, max_decompressed_bytes);
    if (!plain.ok()) {
      status_ = BatchStatus::corrupt(std::string(compression_name(header_.compression())) +
                                     " records: " + plain.error);
      return;
    }
    decompressed_ = std::move(plain.bytes);
    records_ = ByteView(decompressed_.data(), decompressed_.size());
  }
  if (header_.records_count == 0 && !records_.empty()) {
    status_ = BatchStatus::invalid("recordsCount is 0 but the records section is not empty");
    return;
  }
  in_ = Reader(records_);
}

bool BatchRecordReader::next(Record& out) {
  if (!status_.ok() || read_ >= header_.records_count) return false;
  auto record = read_record(in_);
  if (!record) {
    status_ = BatchStatus::invalid("record " + std::to_string(read_) + ": " + in_.error());
    return false;
  }
  out = std::move(*record);
  ++read_;
  // Kafka's "records still remaining" check: recordsCount must account for
  // every byte of the records section.
  if (read_ == header_.records_count && in_.remaining() != 0) {
    status_ = BatchStatus::invalid("bytes remain after the last of " + std::to_string(read_) +
                                   " records (recordsCount too small)");
    return false;
  }
  return true;
}

}  // namespace runnel::protocol::records
