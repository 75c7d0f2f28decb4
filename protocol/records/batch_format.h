// RecordBatch v2 (magic 2), Kafka's only message format since 4.0.
//
//   offset  size  field
//        0     8  baseOffset             first offset in the batch (broker assigns)
//        8     4  batchLength            bytes after this field: total = 12 + batchLength
//       12     4  partitionLeaderEpoch   broker stamps it; not covered by the CRC
//       16     1  magic                  2
//       17     4  crc                    CRC-32C of everything from attributes to the end
//       21     2  attributes             bits 0-2 codec, 3 timestamp type, 4 transactional,
//                                        5 control, 6 delete horizon set
//       23     4  lastOffsetDelta
//       27     8  baseTimestamp          (first timestamp, or delete horizon when bit 6)
//       35     8  maxTimestamp
//       43     8  producerId             -1 when not idempotent
//       51     2  producerEpoch
//       53     4  baseSequence
//       57     4  recordsCount
//       61        records, compressed together when the codec is not none
//
// All integers big-endian. The broker rewrites baseOffset and
// partitionLeaderEpoch in place without touching the CRC.
#pragma once

#include <cstdint>
#include <optional>

#include "protocol/codec/types.h"

namespace runnel::protocol::records {

inline constexpr size_t kBaseOffsetOffset = 0;
inline constexpr size_t kBatchLengthOffset = 8;
inline constexpr size_t kPartitionLeaderEpochOffset = 12;
inline constexpr size_t kMagicOffset = 16;
inline constexpr size_t kCrcOffset = 17;
inline constexpr size_t kAttributesOffset = 21;
inline constexpr size_t kLastOffsetDeltaOffset = 23;
inline constexpr size_t kBaseTimestampOffset = 27;
inline constexpr size_t kMaxTimestampOffset = 35;
inline constexpr size_t kProducerIdOffset = 43;
inline constexpr size_t kProducerEpochOffset = 51;
inline constexpr size_t kBaseSequenceOffset = 53;
inline constexpr size_t kRecordsCountOffset = 57;
inline constexpr size_t kHeaderSize = 61;
// baseOffset and batchLength precede what batchLength counts.
inline constexpr size_t kLogOverhead = 12;

inline constexpr int8_t kMagicV2 = 2;
// RecordBatch.NO_TIMESTAMP: a record without a timestamp.
inline constexpr int64_t kNoTimestamp = -1;

enum class Compression : uint8_t { none = 0, gzip = 1, snappy = 2, lz4 = 3, zstd = 4 };

inline constexpr uint16_t kCompressionMask = 0x07;
inline constexpr uint16_t kTimestampTypeBit = 0x08;  // 1 = LogAppendTime
inline constexpr uint16_t kTransactionalBit = 0x10;
inline constexpr uint16_t kControlBit = 0x20;
inline constexpr uint16_t kDeleteHorizonBit = 0x40;

// The fixed-size header of one batch, decoded.
struct BatchHeader {
  int64_t base_offset = 0;
  int32_t batch_length = 0;
  int32_t partition_leader_epoch = -1;
  int8_t magic = kMagicV2;
  uint32_t crc = 0;
  uint16_t attributes = 0;
  int32_t last_offset_delta = 0;
  int64_t base_timestamp = -1;
  int64_t max_timestamp = -1;
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
  int32_t records_count = 0;

  Compression compression() const { return static_cast<Compression>(attributes & kCompressionMask); }
  bool log_append_time() const { return attributes & kTimestampTypeBit; }
  bool is_transactional() const { return attributes & kTransactionalBit; }
  bool is_control() const { return attributes & kControlBit; }
  int64_t last_offset() const { return base_offset + last_offset_delta; }
  size_t total_size() const { return kLogOverhead + static_cast<size_t>(batch_length); }
  // Sequence of the last record; sequences wrap from INT32_MAX to 0.
  int32_t last_sequence() const {
    if (base_sequence < 0) return -1;
    int64_t last = static_cast<int64_t>(base_sequence) + last_offset_delta;
    return static_cast<int32_t>(last > INT32_MAX ? last - INT32_MAX - 1 : last);
  }
  bool operator==(const BatchHeader&) const = default;
};

// Decodes the header at the start of `bytes`; nullopt if fewer than
// kHeaderSize bytes. Checks nothing else: see validate_batch().
std::optional<BatchHeader> read_batch_header(ByteView bytes);

// Writes `h` into the first kHeaderSize bytes of `out` (crc as given).
void write_batch_header(const BatchHeader& h, uint8_t* out);

// CRC-32C (Castagnoli) of `bytes`, as Kafka's Crc32C computes it.
uint32_t crc32c(ByteView bytes);

// The CRC the batch should carry: over attributes to the end of the batch.
// `batch` is the whole batch (kLogOverhead + batchLength bytes).
uint32_t compute_batch_crc(ByteView batch);

// In-place rewrites the broker makes on append, which leave the CRC valid.
void set_base_offset(uint8_t* batch, int64_t base_offset);
void set_partition_leader_epoch(uint8_t* batch, int32_t epoch);

}  // namespace runnel::protocol::records
