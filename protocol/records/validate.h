// The checks a broker makes before it trusts a RecordBatch v2
// (DefaultRecordBatch.ensureValid and LogValidator.validateBatch in Kafka).
//
// Always, CORRUPT_MESSAGE when they fail: batchLength matches the buffer and
// covers the header, magic is 2, the CRC-32C matches, the codec is known.
//
// Batches from clients (Produce), INVALID_RECORD when they fail:
// recordsCount == lastOffsetDelta + 1 and > 0, no control batch, and a
// producerId >= 0 comes with a baseSequence >= 0. Batches read back from the
// log are exempt: compaction leaves gaps, empty batches and the transaction
// markers the broker wrote itself.
//
// With walk_records, the records section is also decompressed (bounded) and
// every record decoded: exact lengths, recordsCount records and no bytes
// more, offset deltas 0..n-1 for clients or increasing within
// lastOffsetDelta otherwise.
#pragma once

#include <cstddef>

#include "protocol/codec/types.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/batch_status.h"

namespace runnel::protocol::records {

// The default ceiling on a batch's decompressed records section: far above
// what a real producer sends (its batch.size is usually 16 KiB to 1 MiB
// before compression), far below what would hurt the broker.
inline constexpr size_t kDefaultMaxDecompressedBytes = 128u << 20;

struct ValidateOptions {
  bool from_client = true;   // apply the Produce-only rules above
  bool walk_records = false;  // decompress and decode every record
  size_t max_decompressed_bytes = kDefaultMaxDecompressedBytes;
};

// Validates one whole batch: `batch` must be exactly kLogOverhead +
// batchLength bytes.
BatchStatus validate_batch(ByteView batch, const ValidateOptions& options = {});
// The same, with `batch`'s header as the caller already read it.
BatchStatus validate_batch(ByteView batch, const BatchHeader& header, const ValidateOptions& options = {});

}  // namespace runnel::protocol::records
