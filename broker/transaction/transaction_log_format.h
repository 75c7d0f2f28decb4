// The records of __transaction_state, in Kafka's binary formats
// (transaction-coordinator/src/main/resources/common/message/
// TransactionLogKey.json and TransactionLogValue.json, the generated classes
// Kafka 4.1's TransactionLog reads and writes). Key and value each start with
// an int16 version:
//
//   TransactionLogKey   v0  transactionalId string
//   TransactionLogValue v0  producerId int64, producerEpoch int16,
//                           transactionTimeoutMs int32, transactionStatus int8,
//                           transactionPartitions nullable [int32 count]:
//                             topic string, partitionIds [int32 count] int32,
//                           transactionLastUpdateTimestampMs int64,
//                           transactionStartTimestampMs int64
//                       v1  the same fields, flexible: compact strings and
//                           arrays (uvarint length + 1, 0 = null), an empty
//                           tagged-field section after each partitions entry,
//                           and at the end the tagged fields, in tag order,
//                           each written only when not its default:
//                             0 previousProducerId int64 (default -1)
//                             1 nextProducerId int64 (default -1)
//                             2 clientTransactionVersion int16 (default 0)
//
// v0 strings are int16 length + UTF-8. A null value is the tombstone of a
// removed transactional id. Readers skip unknown tagged fields and, as Kafka's
// generated readers do, ignore bytes after the last field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/codec/types.h"

namespace runnel::broker::transaction {

using protocol::Bytes;
using protocol::ByteView;

struct TransactionLogKey {
  std::string transactional_id;
  bool operator==(const TransactionLogKey&) const = default;
};

struct TransactionLogPartitions {
  std::string topic;
  std::vector<int32_t> partition_ids;
  bool operator==(const TransactionLogPartitions&) const = default;
};

struct TransactionLogValue {
  int64_t producer_id = 0;
  int64_t previous_producer_id = -1;  // v1+, tagged
  int64_t next_producer_id = -1;      // v1+, tagged
  int16_t producer_epoch = 0;
  int32_t transaction_timeout_ms = 0;
  int8_t transaction_status = 0;  // a TransactionState id
  std::optional<std::vector<TransactionLogPartitions>> transaction_partitions;
  int64_t transaction_last_update_timestamp_ms = 0;
  int64_t transaction_start_timestamp_ms = 0;
  int16_t client_transaction_version = 0;  // v1+, tagged
  bool operator==(const TransactionLogValue&) const = default;
};

// A decoded record, or why the bytes are not one.
template <typename T>
struct Decoded {
  std::optional<T> value;
  std::string error;  // set when value is not
  explicit operator bool() const { return value.has_value(); }
};

inline constexpr int16_t kTransactionLogKeyVersion = 0;

// Kafka's strings hold at most 32767 bytes; a longer transactional id or topic
// has no record (nullopt), as Kafka's writer throws for it.
inline constexpr size_t kMaxStringBytes = 0x7fff;

std::optional<Bytes> encode_key(const TransactionLogKey& key);
// `version` 0 or 1 (see transaction_log_value_version). nullopt for another
// version, for v0 with a tagged field not at its default, which Kafka's
// writer refuses (UnsupportedVersionException), or for a topic too long.
std::optional<Bytes> encode_value(const TransactionLogValue& value, int16_t version);

// Only key version 0 exists; any other is an error (Kafka's loader skips it).
Decoded<TransactionLogKey> decode_key(ByteView bytes);
// Versions 0 and 1; anything else, or truncated or malformed bytes, an error.
Decoded<TransactionLogValue> decode_value(ByteView bytes);

// The __transaction_state partition that owns a transactional id, as
// TransactionStateManager.partitionFor: Utils.abs(transactionalId.hashCode)
// % transaction.state.log.num.partitions (Java's String.hashCode).
int32_t transaction_partition_for(const std::string& transactional_id, int32_t partitions);

}  // namespace runnel::broker::transaction
