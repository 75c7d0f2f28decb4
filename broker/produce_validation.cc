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

// One pass over the records: offset deltas 0..n-1 (Kafka's "inner record
// offsets"), CreateTime timestamps within message.timestamp.before/after.max.ms
// of now, and keys present on compacted topics.
r::BatchStatus check_records(protocol::ByteView batch, bool compacted, int64_t before_max_ms, int64_t after_max_ms,
                             int64_t now_ms, const std::string& topic) {
  r::BatchRecordReader reader(batch, r::kDefaultMaxDecompressedBytes);
  if (!reader.status().ok()) return reader.status();
  const auto& h = reader.header();
  const bool check_time = !h.log_append_time();
  r::Record rec;
  int32_t expected = 0;
  while (reader.next(rec)) {
    if (rec.offset_delta != expected)
      return r::BatchStatus::invalid("Inner record offset delta " + std::to_string(rec.offset_delta) +
                                     " is not the expected " + std::to_string(expected));
    ++expected;
    if (compacted && !rec.key)
      return r::BatchStatus::invalid("Compacted topic cannot accept message without key in topic partition " + topic + ".");
    if (check_time) {
      int64_t ts = h.base_timestamp + rec.timestamp_delta;
      if ((before_max_ms != INT64_MAX && ts < now_ms - before_max_ms) ||
          (after_max_ms != INT64_MAX && ts > now_ms + after_max_ms))
        return {ErrorCode::invalid_timestamp,
                "Timestamp " + std::to_string(ts) + " of message with offset delta " + std::to_string(rec.offset_delta) +
                    " is out of range. The timestamp should be within [" + std::to_string(now_ms - before_max_ms) + ", " +
                    std::to_string(now_ms + after_max_ms) + "]"};
    }
  }
  if (!reader.status().ok()) return reader.status();
  if (reader.records_read() != h.records_count)
    return r::BatchStatus::invalid("Batch claims " + std::to_string(h.records_count) + " records but holds " +
                                   std::to_string(reader.records_read()));
  return {};
}

}  // namespace

PreparedBatch prepare_batch(const BrokerConfig& config, const Topic& topic, const protocol::Records& records,
                            int64_t now_ms) {
  PreparedBatch out;
  auto cfg = [&](const char* name) { return topic_config_value(config, topic.overrides, name); };
  protocol::ByteView bytes = records.bytes();
  if (records.is_null() || bytes.empty()) {
    out.status = r::BatchStatus::invalid("Produce requests with version 3+ must have at least one record batch per partition");
    return out;
  }
  auto header = r::read_batch_header(bytes);
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
  const int64_t max_message = std::stoll(cfg("max.message.bytes"));
  if (static_cast<int64_t>(bytes.size()) > max_message) {
    out.status = {ErrorCode::message_too_large, "The record batch size " + std::to_string(bytes.size()) +
                                                   " is larger than the topic's max.message.bytes " + std::to_string(max_message)};
    return out;
  }
  out.status = r::validate_batch(bytes, {.from_client = true, .walk_records = false});
  if (!out.status.ok()) return out;
  const bool compacted = cfg("cleanup.policy").find("compact") != std::string::npos;
  out.status = check_records(bytes, compacted, std::stoll(cfg("message.timestamp.before.max.ms")),
                             std::stoll(cfg("message.timestamp.after.max.ms")), now_ms, topic.name);
  if (!out.status.ok()) return out;

  auto target = target_codec(cfg("compression.type"));
  if (target && *target != header->compression()) {
    std::optional<int> level;
    if (*target != r::Compression::none) {
      std::string key = std::string("compression.") + r::compression_name(*target) + ".level";
      if (find_topic_config(key)) level = std::stoi(cfg(key.c_str()));
    }
    out.status = r::recompress_batch(bytes, *target, level, r::kDefaultMaxDecompressedBytes, out.rebuilt);
    if (!out.status.ok()) return out;
    out.bytes = std::span<uint8_t>(out.rebuilt.data(), out.rebuilt.size());
    return out;
  }
  // The request frame is ours: the append rewrites offsets in place.
  out.bytes = std::span<uint8_t>(const_cast<uint8_t*>(bytes.data()), bytes.size());
  return out;
}

}  // namespace runnel::broker
