// ListOffsets for one topic's partitions, each asked of its leader:
// the earliest offset (timestamp -2), the latest (-1, the high watermark,
// or the last stable offset under read_committed) or the first offset whose
// timestamp is at least T (-1 back when no record is that late).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cli/cluster.h"

namespace runnel::cli {

inline constexpr int64_t kLatestTimestamp = -1;
inline constexpr int64_t kEarliestTimestamp = -2;

// partition -> offset.
std::map<int32_t, int64_t> list_offsets(Cluster& cluster, const std::string& topic,
                                        const std::vector<int32_t>& partitions, int64_t timestamp,
                                        int8_t isolation_level = 0);

}  // namespace runnel::cli
