// Building RecordBatch v2 bytes: for the broker when it must rebuild a batch
// (the topic's compression differs from the producer's, or it writes
// transaction markers), and for tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "protocol/codec/types.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/batch_status.h"
#include "protocol/records/record.h"

namespace runnel::protocol::records {

// Everything a batch says about itself besides its records. batchLength,
// crc and recordsCount are computed.
struct BatchSpec {
  int64_t base_offset = 0;
  int32_t partition_leader_epoch = -1;
  Compression compression = Compression::none;
  std::optional<int> compression_level;  // nullopt: Kafka's default for the codec
  bool log_append_time = false;
  bool transactional = false;
  bool control = false;
  int64_t base_timestamp = -1;               // record timestamps are deltas from it
  std::optional<int64_t> max_timestamp;      // default: base + largest delta
  std::optional<int32_t> last_offset_delta;  // default: the last record's offsetDelta
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  int32_t base_sequence = -1;
};

// Builds one batch holding `records` in the order given, their offset deltas
// as they are (0..n-1 for what a producer would send).
Bytes build_batch(const BatchSpec& spec, std::span<const Record> records);

// Rebuilds `batch` with its records compressed by `codec` instead, keeping
// every other header field (offsets, timestamps, producer fields, epoch,
// flags). The batch must pass framing and CRC checks, and every record is
// decoded on the way (at most `max_decompressed_bytes`), so damage is
// reported rather than sealed under a fresh CRC.
BatchStatus recompress_batch(ByteView batch, Compression codec, std::optional<int> level,
                             size_t max_decompressed_bytes, Bytes& out);

}  // namespace runnel::protocol::records
