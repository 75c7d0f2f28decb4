// The offset and timestamp of each record in a batch, which ListOffsets by
// timestamp needs (a batch header only has the largest timestamp).
//
// Storage decodes the batch with the protocol's records codec, compressed
// or not (decompression bounded as the broker's validation bounds it). A
// LogAppendTime batch needs no decoding: every record carries the batch's
// maxTimestamp, and the segment answers it from the header.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "protocol/codec/types.h"

namespace runnel::storage {

struct RecordTime {
  int64_t offset = 0;
  int64_t timestamp = 0;
  bool operator==(const RecordTime&) const = default;
};

// The records of a whole batch (baseOffset already assigned), in order;
// nullopt when the batch cannot be decoded.
std::optional<std::vector<RecordTime>> record_times(protocol::ByteView batch);

}  // namespace runnel::storage
