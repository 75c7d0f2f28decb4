// What the coordinators (groups on __consumer_offsets, transactions on
// __transaction_state) do with their partitions' logs off the event loop:
// read every keyed record back to replay it at load, and fsync an append.
// Plain functions returned for Broker::run_blocking.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "protocol/codec/types.h"
#include "storage/log.h"

namespace runnel::broker {

struct KeyedRecord {
  protocol::Bytes key;
  std::optional<protocol::Bytes> value;  // nullopt: a tombstone
};

struct KeyedRecords {
  std::vector<KeyedRecord> records;
  std::string error;  // set when the read stopped early
};

// Every keyed record of the log's data batches, oldest first; control
// batches and records without a key are skipped.
std::function<KeyedRecords()> read_keyed_records(std::shared_ptr<storage::Log> log);

std::function<std::error_code()> sync_log(std::shared_ptr<storage::Log> log);

}  // namespace runnel::broker
