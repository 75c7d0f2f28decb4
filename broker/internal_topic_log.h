// What the coordinators (groups on __consumer_offsets, transactions on
// __transaction_state) do with their partitions' logs: read every keyed
// record back to replay it at load (a plain function for
// Broker::run_blocking), and append a batch of their records.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "broker/asio.h"
#include "protocol/codec/types.h"
#include "protocol/error_codes.h"
#include "storage/log.h"

namespace runnel::replication {
class Partition;
}

namespace runnel::broker {

class Broker;

struct KeyedRecord {
  int64_t offset = -1;
  // The producer of a transactional batch (a TxnOffsetCommit's records),
  // -1 otherwise.
  int64_t producer_id = -1;
  // Set for a transaction marker (commit: true), which has no key or value:
  // the end of `producer_id`'s transaction.
  std::optional<bool> marker;
  protocol::Bytes key;
  std::optional<protocol::Bytes> value;  // nullopt: a tombstone
};

struct KeyedRecords {
  std::vector<KeyedRecord> records;
  std::string error;  // set when the read stopped early
};

// Every keyed record of the log's data batches and every transaction
// marker, oldest first; other control records and records without a key
// are skipped.
std::function<KeyedRecords()> read_keyed_records(std::shared_ptr<storage::Log> log);

struct CoordinatorAppend {
  protocol::ErrorCode error = protocol::ErrorCode::none;
  int64_t base_offset = -1;  // of the batch, once appended
};

// As Kafka's coordinators write: acks=all through the replica manager, with
// `min_isr`, waiting up to `timeout` for the high watermark to pass the
// records; then, with runnel.acks.all.fsync and `sync`, their fsync, as an
// acks=all produce is answered (KAFKA_STORAGE_ERROR when it fails). Otherwise the
// partition's error (a transactional batch's producer epoch is checked:
// INVALID_PRODUCER_EPOCH).
awaitable<CoordinatorAppend> append_coordinator_batch(Broker& broker, std::shared_ptr<replication::Partition> part,
                                                        int32_t min_isr, protocol::Bytes batch,
                                                        std::chrono::milliseconds timeout, bool sync = true);

}  // namespace runnel::broker
