#include "protocol/records/control_record.h"

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"

namespace runnel::protocol::records {

namespace {

constexpr int16_t kControlKeyVersion = 0;
constexpr int16_t kEndTxnMarkerVersion = 0;
// Control records are tiny; anything larger is not one Kafka wrote.
constexpr size_t kMaxControlBatchBytes = 1 << 16;

}  // namespace

Bytes build_end_txn_marker_batch(int64_t producer_id, int16_t producer_epoch, const EndTxnMarker& marker,
                                 int64_t timestamp_ms) {
  Bytes key;
  Writer k(key);
  k.i16(kControlKeyVersion);
  k.i16(static_cast<int16_t>(marker.type));
  Bytes value;
  Writer v(value);
  v.i16(kEndTxnMarkerVersion);
  v.i32(marker.coordinator_epoch);

  Record record;
  record.key = ByteView(key);
  record.value = ByteView(value);
  BatchSpec spec;
  spec.transactional = true;
  spec.control = true;
  spec.base_timestamp = timestamp_ms;
  spec.producer_id = producer_id;
  spec.producer_epoch = producer_epoch;
  spec.base_sequence = -1;
  const Record records[] = {record};
  return build_batch(spec, records);
}

std::optional<EndTxnMarker> read_end_txn_marker(ByteView batch, const BatchHeader& header) {
  if (!header.is_control() || header.records_count < 1) return std::nullopt;
  BatchRecordReader reader(batch, header, kMaxControlBatchBytes);
  Record record;
  if (!reader.next(record) || !record.key || !record.value) return std::nullopt;
  Reader key(*record.key);
  const int16_t key_version = key.i16();
  const int16_t type = key.i16();
  if (!key.ok() || key_version < 0) return std::nullopt;
  if (type != static_cast<int16_t>(ControlRecordType::abort) && type != static_cast<int16_t>(ControlRecordType::commit))
    return std::nullopt;
  Reader value(*record.value);
  const int16_t value_version = value.i16();
  const int32_t coordinator_epoch = value.i32();
  // A newer value version may add fields after these two (Kafka reads them alike).
  if (!value.ok() || value_version < 0) return std::nullopt;
  return EndTxnMarker{static_cast<ControlRecordType>(type), coordinator_epoch};
}

}  // namespace runnel::protocol::records
