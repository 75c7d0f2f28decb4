// Between a transactional id's metadata and its __transaction_state record,
// as Kafka 4.1's TransactionLog (core kafka/coordinator/transaction/
// TransactionLog.scala): keyToBytes, valueToBytes, readTxnRecordValue.
//
// Kafka 4.1 writes neither previousProducerId nor nextProducerId (they stay at
// their default -1, so a v1 value carries at most the clientTransactionVersion
// tag), writes null partitions for Empty, and does not persist the last
// producer epoch: a loaded id has last_producer_epoch -1.
#pragma once

#include <string>

#include "broker/transaction/transaction_log_format.h"
#include "broker/transaction/transaction_metadata.h"

namespace runnel::broker::transaction {

// nullopt for an id longer than 32767 bytes.
std::optional<Bytes> key_to_bytes(const std::string& transactional_id);

// The value for a transit. The version follows the cluster's finalized
// transaction.version (`level`), not the client's. nullopt where Kafka throws:
// an Empty transit with partitions, or a client version above 0 for a v0 value.
std::optional<TransactionLogValue> to_log_value(const TxnTransitMetadata& transit);
std::optional<Bytes> value_to_bytes(const TxnTransitMetadata& transit, TransactionVersion level);

// The metadata a loaded value stands for (readTxnRecordValue); an error for an
// unknown state id or client transaction version, or partitions missing from a
// state that has them. A tombstone (null value) has no metadata: the id is gone.
Decoded<TransactionMetadata> metadata_from_log_value(const std::string& transactional_id,
                                                     const TransactionLogValue& value);

}  // namespace runnel::broker::transaction
