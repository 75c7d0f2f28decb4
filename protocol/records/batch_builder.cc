#include "protocol/records/batch_builder.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "protocol/records/batch_reader.h"
#include "protocol/records/compression.h"
#include "protocol/records/validate.h"

namespace runnel::protocol::records {

namespace {

// Compresses the records section per h's codec, then fills in batchLength
// and the CRC. `h` has every other field set.
Bytes seal(BatchHeader h, ByteView records_section, std::optional<int> level) {
  auto packed = compress(h.compression(), records_section, level);
  if (!packed.ok()) throw std::invalid_argument(packed.error);
  size_t total = kHeaderSize + packed.bytes.size();
  if (total - kLogOverhead > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
    throw std::length_error("record batch larger than batchLength can say");
  h.magic = kMagicV2;
  h.batch_length = static_cast<int32_t>(total - kLogOverhead);
  h.crc = 0;
  Bytes out(kHeaderSize);
  out.insert(out.end(), packed.bytes.begin(), packed.bytes.end());
  write_batch_header(h, out.data());
  h.crc = compute_batch_crc(out);
  write_batch_header(h, out.data());
  return out;
}

}  // namespace

Bytes build_batch(const BatchSpec& spec, std::span<const Record> records) {
  BatchHeader h;
  h.base_offset = spec.base_offset;
  h.partition_leader_epoch = spec.partition_leader_epoch;
  h.attributes = static_cast<uint16_t>(spec.compression) | (spec.log_append_time ? kTimestampTypeBit : 0) |
                 (spec.transactional ? kTransactionalBit : 0) | (spec.control ? kControlBit : 0);
  h.last_offset_delta = spec.last_offset_delta.value_or(records.empty() ? 0 : records.back().offset_delta);
  h.base_timestamp = spec.base_timestamp;
  int64_t max_delta = 0;
  for (const auto& r : records) max_delta = std::max(max_delta, r.timestamp_delta);
  h.max_timestamp = spec.max_timestamp.value_or(spec.base_timestamp + max_delta);
  h.producer_id = spec.producer_id;
  h.producer_epoch = spec.producer_epoch;
  h.base_sequence = spec.base_sequence;
  h.records_count = static_cast<int32_t>(records.size());

  Bytes section;
  size_t size = 0;
  for (const auto& r : records) size += record_size(r);
  section.reserve(size);
  for (const auto& r : records) write_record(r, section);
  return seal(h, section, spec.compression_level);
}

BatchStatus recompress_batch(ByteView batch, Compression codec, std::optional<int> level,
                             size_t max_decompressed_bytes, Bytes& out) {
  ValidateOptions framing;
  framing.from_client = false;
  if (auto s = validate_batch(batch, framing); !s.ok()) return s;
  BatchRecordReader reader(batch, max_decompressed_bytes);
  Record record;
  while (reader.next(record)) {
  }
  if (!reader.status().ok()) return reader.status();
  // The section is re-compressed as is: records carry only deltas, so
  // offsets and timestamps survive byte for byte.
  BatchHeader h = reader.header();
  h.attributes = static_cast<uint16_t>((h.attributes & ~kCompressionMask) | static_cast<uint16_t>(codec));
  out = seal(h, reader.records_bytes(), level);
  return {};
}

}  // namespace runnel::protocol::records
