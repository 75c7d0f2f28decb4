#include "protocol/records/validate.h"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "protocol/records/batch_format.h"
#include "protocol/records/batch_reader.h"

namespace runnel::protocol::records {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08" PRIx32, v);
  return buf;
}

BatchStatus check_framing(ByteView batch, const BatchHeader& header) {
  if (header.batch_length < static_cast<int32_t>(kHeaderSize - kLogOverhead))
    return BatchStatus::corrupt("batchLength " + str(header.batch_length) + " is smaller than the header");
  if (header.total_size() != batch.size())
    return BatchStatus::corrupt("batchLength " + str(header.batch_length) + " implies " +
                                str(header.total_size()) + " bytes but the batch has " + str(batch.size()));
  if (header.magic != kMagicV2) return BatchStatus::corrupt("magic is " + str(header.magic) + ", expected 2");
  uint32_t crc = compute_batch_crc(batch);
  if (crc != header.crc)
    return BatchStatus::corrupt("CRC mismatch: batch says " + hex(header.crc) + ", computed " + hex(crc));
  if ((header.attributes & kCompressionMask) > static_cast<uint16_t>(Compression::zstd))
    return BatchStatus::corrupt("unknown compression codec " + str(header.attributes & kCompressionMask));
  return {};
}

BatchStatus check_client_rules(const BatchHeader& h) {
  if (h.last_offset_delta < 0)
    return BatchStatus::invalid("lastOffsetDelta " + str(h.last_offset_delta) + " is negative");
  if (h.records_count <= 0) return BatchStatus::invalid("recordsCount " + str(h.records_count) + " is not positive");
  if (static_cast<int64_t>(h.last_offset_delta) + 1 != h.records_count)
    return BatchStatus::invalid("lastOffsetDelta " + str(h.last_offset_delta) + " does not match recordsCount " +
                                str(h.records_count));
  if (h.is_control()) return BatchStatus::invalid("clients may not write control batches");
  if (h.producer_id >= 0 && h.base_sequence < 0)
    return BatchStatus::invalid("baseSequence " + str(h.base_sequence) + " with producerId " + str(h.producer_id));
  return {};
}

BatchStatus check_log_rules(const BatchHeader& h) {
  if (h.last_offset_delta < 0)
    return BatchStatus::invalid("lastOffsetDelta " + str(h.last_offset_delta) + " is negative");
  if (h.records_count < 0) return BatchStatus::invalid("recordsCount " + str(h.records_count) + " is negative");
  if (h.records_count > static_cast<int64_t>(h.last_offset_delta) + 1)
    return BatchStatus::invalid("recordsCount " + str(h.records_count) + " exceeds the offsets lastOffsetDelta " +
                                str(h.last_offset_delta) + " allows");
  return {};
}

BatchStatus walk_records(ByteView batch, const BatchHeader& header, const ValidateOptions& options) {
  BatchRecordReader reader(batch, header, options.max_decompressed_bytes);
  if (!reader.status().ok()) return reader.status();
  const BatchHeader& h = reader.header();
  Record record;
  int64_t previous = -1;
  while (reader.next(record)) {
    int32_t index = reader.records_read() - 1;
    bool in_order = options.from_client ? record.offset_delta == index
                                        : record.offset_delta > previous && record.offset_delta <= h.last_offset_delta;
    if (!in_order)
      return BatchStatus::invalid("record " + str(index) + " has offsetDelta " + str(record.offset_delta) +
                                  (options.from_client ? ", expected " + str(index)
                                                       : " out of order or past lastOffsetDelta"));
    previous = record.offset_delta;
  }
  return reader.status();
}

}  // namespace

BatchStatus validate_batch(ByteView batch, const ValidateOptions& options) {
  auto header = read_batch_header(batch);
  if (!header)
    return BatchStatus::corrupt("batch of " + str(batch.size()) + " bytes is shorter than the " +
                                str(kHeaderSize) + "-byte header");
  return validate_batch(batch, *header, options);
}

BatchStatus validate_batch(ByteView batch, const BatchHeader& header, const ValidateOptions& options) {
  if (auto s = check_framing(batch, header); !s.ok()) return s;
  if (auto s = options.from_client ? check_client_rules(header) : check_log_rules(header); !s.ok()) return s;
  if (options.walk_records) return walk_records(batch, header, options);
  return {};
}

}  // namespace runnel::protocol::records
