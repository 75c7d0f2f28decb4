#include "broker/produce_validation.h"

#include <chrono>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/compression.h"
#include "protocol/records/validate.h"

namespace runnel::broker {

namespace r = protocol::records;
using protocol::ErrorCode;

namespace {

std::optional<r::Compression> target_codec(const std::string& type) {
  if (type == "producer") return std::nullopt;
  if (type == "uncompressed") return r::Compression::none;
  if (type == "gzip") return r::Compression::gzip;
  if (type == "snappy") return r::Compression::snappy;
  if (type == "lz4") return r::Compression::lz4;
  return r::Compression::zstd;
}

// Java's long arithmetic, which Kafka's messages print: an unbounded
// before/after.max.ms (Long.MAX_VALUE) wraps instead of being undefined.
int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t wrapping_sub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

// Java's RecordError.toString, as processRecordErrors lists them.
std::string describe(const r::RecordError& e) {
  return "RecordError(batchIndex=" + std::to_string(e.batch_index) + ", message='" + e.message + "')";
}

// LogValidator.processRecordErrors: every refused record is listed; the
// partition's error is INVALID_TIMESTAMP if any timestamp was refused.
r::BatchStatus refuse_records(std::vector<r::RecordError> errors, bool any_timestamp) {
  r::BatchStatus s;
  if (any_timestamp) {
    s = {ErrorCode::invalid_timestamp, "One or more records have been rejected due to invalid timestamp", {}};
  } else {
    std::string shown;
    for (size_t i = 0; i < std::min<size_t>(errors.size(), 3); ++i) shown += (i ? ", " : "") + describe(errors[i]);
    s = r::BatchStatus::invalid("One or more records have been rejected due to " + std::to_string(errors.size()) +
                                " record errors in total, and only showing the first three errors at most: [" + shown +
                                "]");
  }
  s.record_errors = std::move(errors);
  return s;
}

// One pass over the records: offset deltas 0..n-1 (Kafka's "inner record
// offsets"), then LogValidator.validateRecord for each record: a key on
// compacted topics, else a CreateTime timestamp within
// message.timestamp.before/after.max.ms of now. Those two are per record:
// every record at fault is named, not only the first.
r::BatchStatus check_records(protocol::ByteView batch, const r::BatchHeader& header, bool compacted,
                             int64_t before_max_ms, int64_t after_max_ms, int64_t now_ms,
                             const std::string& topic_partition) {
  r::BatchRecordReader reader(batch, header, r::kDefaultMaxDecompressedBytes);
  if (!reader.status().ok()) return reader.status();
  const auto& h = reader.header();
  const bool check_time = !h.log_append_time();
  std::vector<r::RecordError> errors;
  bool any_timestamp = false;
  r::Record rec;
  int32_t index = 0;
  for (; reader.next(rec); ++index) {
    if (rec.offset_delta != index)
      return r::BatchStatus::invalid("Inner record offset delta " + std::to_string(rec.offset_delta) +
                                     " is not the expected " + std::to_string(index));
    if (compacted && !rec.key) {
      errors.push_back({index, "Compacted topic cannot accept message without key in topic partition " +
                                   topic_partition + "."});
      continue;
    }
    const int64_t ts = wrapping_add(h.base_timestamp, rec.timestamp_delta);
    if (!check_time || ts == r::kNoTimestamp) continue;
    // LogValidator.recordHasInvalidTimestamp, in Java's arithmetic.
    const int64_t diff = wrapping_sub(now_ms, ts);
    if (diff > before_max_ms || wrapping_sub(0, diff) > after_max_ms) {
      any_timestamp = true;
      errors.push_back({index, "Timestamp " + std::to_string(ts) + " of message with offset " +
                                   std::to_string(wrapping_add(h.base_offset, rec.offset_delta)) +
                                   " is out of range. The timestamp should be within [" +
                                   std::to_string(wrapping_sub(now_ms, before_max_ms)) + ", " +
                                   std::to_string(wrapping_add(now_ms, after_max_ms)) + "]"});
    }
  }
  if (!reader.status().ok()) return reader.status();
  if (reader.records_read() != h.records_count)
    return r::BatchStatus::invalid("Batch claims " + std::to_string(h.records_count) + " records but holds " +
                                   std::to_string(reader.records_read()));
  if (!errors.empty()) return refuse_records(std::move(errors), any_timestamp);
  return {};
}

}  // namespace

PreparedBatch prepare_batch(const BrokerConfig& /*broker*/, const Topic& topic, int32_t partition,
                            const protocol::Records& records, const std::optional<r::BatchHeader>& header,
                            int64_t now_ms) {
  PreparedBatch out;
  const TopicConfig& cfg = topic.config;
  protocol::ByteView bytes = records.bytes();
  if (records.is_null() || bytes.empty()) {
    out.status = r::BatchStatus::invalid("Produce requests with version 3+ must have at least one record batch per partition");
    return out;
  }
  if (!header || header->batch_length < 0 || header->total_size() > bytes.size()) {
    out.status = r::BatchStatus::corrupt("Record batch is truncated");
    return out;
  }
  if (header->magic != r::kMagicV2) {
    out.status = r::BatchStatus::invalid("Produce requests with version 3+ are only allowed to contain record batches with magic version 2");
    return out;
  }
  if (header->total_size() != bytes.size()) {
    out.status = r::BatchStatus::invalid("Produce requests with version 3+ are only allowed to contain exactly one record batch");
    return out;
  }
  const int64_t max_message = cfg.max_message_bytes;
  if (static_cast<int64_t>(bytes.size()) > max_message) {
    out.status = {ErrorCode::message_too_large, "The record batch size " + std::to_string(bytes.size()) +
                                                   " is larger than the topic's max.message.bytes " + std::to_string(max_message),
                  {}};
    return out;
  }
  // From here on the checks are LogValidator's: a refusal that is not
  // corruption carries the log start offset, as Kafka's does.
  out.status = r::validate_batch(bytes, *header, {.from_client = true, .walk_records = false});
  if (out.status.ok()) {
    out.status = check_records(bytes, *header, cfg.log.cleanup_compact, cfg.message_timestamp_before_max_ms,
                               cfg.message_timestamp_after_max_ms, now_ms,
                               topic.name + "-" + std::to_string(partition));
  }
  if (!out.status.ok()) {
    out.reports_log_start = out.status.code != ErrorCode::corrupt_message;
    return out;
  }

  auto target = target_codec(cfg.compression_type);
  if (target && *target != header->compression()) {
    // Snappy has no level (Kafka's compression.*.level are gzip, lz4, zstd).
    std::optional<int> level;
    if (*target == r::Compression::gzip) level = cfg.compression_gzip_level;
    if (*target == r::Compression::lz4) level = cfg.compression_lz4_level;
    if (*target == r::Compression::zstd) level = cfg.compression_zstd_level;
    out.status = r::recompress_batch(bytes, *target, level, r::kDefaultMaxDecompressedBytes, out.rebuilt);
    if (!out.status.ok()) return out;
    out.bytes = std::span<uint8_t>(out.rebuilt.data(), out.rebuilt.size());
    out.header = *r::read_batch_header(out.rebuilt);  // a new batch: its own header
    return out;
  }
  // The request frame is ours: the append rewrites offsets in place.
  out.bytes = std::span<uint8_t>(const_cast<uint8_t*>(bytes.data()), bytes.size());
  out.header = *header;
  return out;
}

}  // namespace runnel::broker
