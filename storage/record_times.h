// The offset and timestamp of each record in a batch, which ListOffsets by
// timestamp needs (a batch header only has the largest timestamp).
//
// Storage reads uncompressed batches itself (a record starts with its length
// varint, attributes int8, timestampDelta varlong, offsetDelta varint). For
// compressed CreateTime batches it needs the records codec: the broker
// passes one in as a RecordTimesFn. A LogAppendTime batch needs no
// decoding: every record carries the batch's maxTimestamp.
#pragma once

#include <cstdint>
#include <functional>
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
// nullopt when the batch cannot be decoded by this function.
using RecordTimesFn = std::function<std::optional<std::vector<RecordTime>>(protocol::ByteView batch)>;

// Decodes uncompressed batches only; nullopt for compressed or malformed ones.
std::optional<std::vector<RecordTime>> uncompressed_record_times(protocol::ByteView batch);

}  // namespace runnel::storage
