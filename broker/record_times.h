// The offset and timestamp of every record of a stored batch, decompressing
// when needed: what storage asks for to answer ListOffsets by timestamp.
#pragma once

#include "storage/record_times.h"

namespace runnel::broker {

std::optional<std::vector<storage::RecordTime>> record_times(protocol::ByteView batch);

}  // namespace runnel::broker
