// Kafka's transaction.version feature (server-common TransactionVersion.java):
// the protocol a transaction's client speaks and the cluster has finalized.
//
//   TV_0  the original protocol; __transaction_state values are version 0
//   TV_1  values are version 1 (flexible, with tagged fields)
//   TV_2  KIP-890 part 2: every EndTxn bumps the producer epoch, and the
//         coordinator adds partitions implicitly
//
// A transaction keeps the client's version (TransactionMetadata's
// clientTransactionVersion); the value version written to the log follows the
// cluster's finalized level instead.
#pragma once

#include <cstdint>
#include <optional>

namespace runnel::broker::transaction {

enum class TransactionVersion : int16_t { tv0 = 0, tv1 = 1, tv2 = 2 };

inline constexpr const char* kTransactionVersionFeature = "transaction.version";
// What ApiVersions reports finalized, as a Kafka 4.x cluster formatted at
// its defaults: clients may speak transaction protocol v2, and the
// coordinator writes __transaction_state values at version 1.
inline constexpr TransactionVersion kFinalizedTransactionVersion = TransactionVersion::tv2;

inline int16_t feature_level(TransactionVersion v) { return static_cast<int16_t>(v); }

// Kafka's Feature.TRANSACTION_VERSION.fromFeatureLevel: only the known levels.
inline std::optional<TransactionVersion> transaction_version_from_level(int16_t level) {
  if (level < 0 || level > 2) return std::nullopt;
  return static_cast<TransactionVersion>(level);
}

// TransactionVersion.supportsEpochBump: TV_2 and later.
inline bool supports_epoch_bump(TransactionVersion v) { return feature_level(v) >= 2; }

// TransactionVersion.transactionLogValueVersion: TV_1 and later write value v1.
inline int16_t transaction_log_value_version(TransactionVersion v) { return feature_level(v) >= 1 ? 1 : 0; }

}  // namespace runnel::broker::transaction
