// Where the group coordinator's records go: the partitions of
// __consumer_offsets, as key and value in Kafka's formats (offsets_format.h).
// Both the group manager and the offset manager write through it.
//
// An append completes asynchronously, as Kafka's coordinator writes do: its
// callback runs once the records are as durable as an acks=all produce (on
// one broker after the local append and, with runnel.acks.all.fsync, its
// fsync; with replication once the high watermark passes them). It may run
// before append() returns or later, always on the coordinator's thread. A
// caller applies its change in the callback and re-checks the group there:
// it may have moved on meanwhile (Kafka's storeGroup / storeOffsets callbacks).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <system_error>
#include <vector>

#include "protocol/codec/types.h"

namespace runnel::broker::group {

using protocol::Bytes;

// One __consumer_offsets record: key and value (nullopt = tombstone).
struct OffsetsRecord {
  Bytes key;
  std::optional<Bytes> value;
};

using AppendDone = std::function<void(std::error_code)>;

class OffsetsStore {
 public:
  virtual ~OffsetsStore() = default;
  // Appends the records as one batch to the partition; `done` runs once.
  virtual void append(int32_t partition, std::vector<OffsetsRecord> records, AppendDone done) = 0;
};

}  // namespace runnel::broker::group
