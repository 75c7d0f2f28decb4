// Where the group coordinator's records go: the partitions of
// __consumer_offsets, as key and value in Kafka's formats (offsets_format.h).
// Both the group manager and the offset manager write through it.
#pragma once

#include <cstdint>
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

class OffsetsStore {
 public:
  virtual ~OffsetsStore() = default;
  virtual std::error_code append(int32_t partition, const std::vector<OffsetsRecord>& records) = 0;
};

}  // namespace runnel::broker::group
