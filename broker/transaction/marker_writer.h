// Appends transaction markers to the partitions this broker leads: the work
// of WriteTxnMarkers (handlers/27_write_txn_markers.cc), shared with the
// local transaction coordinator, which writes the markers of the partitions
// it leads itself rather than through a request to its own listener.
//
// As Kafka's handleWriteTxnMarkersRequest: an unknown partition is
// UNKNOWN_TOPIC_OR_PARTITION; each marker is a control batch appended with
// acks=all (AppendOrigin::coordinator, internal topics allowed) that waits up
// to request.timeout.ms for the ISR. The partition checks the producer and
// coordinator epochs (replication/partition.h), so a fenced coordinator's
// marker is TRANSACTION_COORDINATOR_FENCED and a stale one
// INVALID_PRODUCER_EPOCH. With runnel.acks.all.fsync the markers are fsynced
// before the answer, as an acks=all produce is: a coordinator that marks a
// transaction complete must never find its marker lost after a crash. A
// failed fsync answers KAFKA_STORAGE_ERROR, which the coordinator retries.
// A marker written on __consumer_offsets then commits or drops the
// transaction's pending offsets in the group coordinator.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "broker/asio.h"
#include "protocol/error_codes.h"

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::transaction {

// One transaction's end, as WriteTxnMarkers carries it.
struct TxnMarker {
  int64_t producer_id = -1;
  int16_t producer_epoch = -1;
  bool commit = false;
  int32_t coordinator_epoch = 0;
  int8_t transaction_version = 0;
};

// One partition to mark. `error` set beforehand (an authorization failure)
// skips it; otherwise it receives the partition's answer.
struct MarkerTarget {
  const TxnMarker* marker = nullptr;
  std::string topic;
  int32_t partition = -1;
  protocol::ErrorCode error = protocol::ErrorCode::none;
};

awaitable<void> write_markers(Broker& broker, std::span<MarkerTarget> targets);

}  // namespace runnel::broker::transaction
