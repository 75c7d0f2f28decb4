// What a leader's append takes and gives back (Kafka's LogAppendInfo and
// the arguments of Partition.appendRecordsToLeader), shared by the
// partition, the replica manager and the validation that runs before it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "base/ids.h"
#include "protocol/codec/types.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/batch_status.h"

namespace runnel::replication {

// A batch checked and ready to append (Kafka's LogValidator output).
struct PreparedBatch {
  protocol::records::BatchStatus status;
  std::span<uint8_t> bytes;  // what to append: the request's bytes, or `rebuilt`
  protocol::records::BatchHeader header;  // of `bytes`, when the status is ok
  protocol::Bytes rebuilt;   // owns the batch when it was recompressed
  // Refused by the log's validation rather than the request's checks:
  // Kafka's answer then carries the partition's log start offset.
  bool reports_log_start = false;
};

// Kafka's AppendOrigin: a client's Produce, or a coordinator writing its
// own internal topic (built by the broker, so it skips the client checks).
enum class AppendOrigin : uint8_t { client, coordinator };

struct LeaderAppendRequest {
  AppendOrigin origin = AppendOrigin::client;
  int16_t required_acks = -1;
  int32_t min_insync_replicas = 1;  // the topic's min.insync.replicas
  bool log_append_time = false;     // message.timestamp.type=LogAppendTime (a duplicate reports its time)
  // A transaction marker's transaction version (WriteTxnMarkers v2,
  // KIP-1228), which decides how its producer epoch is checked.
  int8_t transaction_version = 0;
  // transaction.partition.verification.enable on a client's Produce: a
  // transactional batch that would open its producer's transaction here
  // must hold the producer's verification guard (ProducerStateTable::
  // start_verification), else INVALID_TXN_STATE, as Kafka's
  // analyzeAndValidateProducerState. 0: not verified.
  bool verify_transactions = false;
  uint64_t verification_guard = 0;
  // Runs after the ISR check, as Kafka validates inside appendAsLeader.
  std::function<PreparedBatch()> validate;
};

// A batch the broker built itself (a coordinator's records, a transaction
// marker): no client checks, only framed for the append, which rewrites
// its base offset in place, so `batch` must outlive the append and belong
// to it alone.
inline std::function<PreparedBatch()> built_batch(protocol::Bytes& batch) {
  return [&batch] {
    PreparedBatch out;
    out.bytes = std::span<uint8_t>(batch.data(), batch.size());
    out.header = *protocol::records::read_batch_header(batch);
    return out;
  };
}

struct LeaderAppendResult {
  protocol::records::BatchStatus status;  // none: appended, or a duplicate acknowledged
  Offset base_offset = kUnknownOffset;
  Offset last_offset = kUnknownOffset;
  int64_t log_append_time_ms = -1;
  Offset log_start_offset = kUnknownOffset;  // -1 where Kafka reports none
  bool duplicate = false;
  bool ok() const { return status.ok(); }
};

}  // namespace runnel::replication
