// Control records (Kafka's ControlRecordType, EndTransactionMarker): the one
// record of a control batch (attribute bit 5) that a transaction coordinator
// has a partition leader write to end a transaction. Its key is
// {int16 version 0, int16 type} and, for COMMIT and ABORT, its value is
// {int16 version 0, int32 coordinator epoch}, all big-endian. Readers skip
// control batches; consumers learn from them which transactions ended and
// how, and the partition closes the producer's open transaction.
#pragma once

#include <cstdint>
#include <optional>

#include "protocol/codec/types.h"
#include "protocol/records/batch_format.h"

namespace runnel::protocol::records {

// Kafka's ids; other types (LEADER_CHANGE 2, KRaft's snapshot and voter
// types) are not transaction markers.
enum class ControlRecordType : int16_t { abort = 0, commit = 1 };

struct EndTxnMarker {
  ControlRecordType type = ControlRecordType::abort;
  int32_t coordinator_epoch = 0;
  bool commit() const { return type == ControlRecordType::commit; }
  bool operator==(const EndTxnMarker&) const = default;
};

// A whole control batch holding `marker`, as Kafka's
// MemoryRecords.withEndTransactionMarker builds it: base offset 0 (the log
// assigns it), transactional and control bits, no compression, sequence -1,
// the record and batch timestamps `timestamp_ms`.
Bytes build_end_txn_marker_batch(int64_t producer_id, int16_t producer_epoch, const EndTxnMarker& marker,
                                 int64_t timestamp_ms);

// The marker of a control batch (its first record), as Kafka's
// EndTransactionMarker.deserialize reads it; nullopt when the batch holds no
// record (a cleaned transaction), is not a COMMIT or ABORT marker, or is
// malformed. `batch` is the whole batch, header included.
std::optional<EndTxnMarker> read_end_txn_marker(ByteView batch, const BatchHeader& header);

}  // namespace runnel::protocol::records
