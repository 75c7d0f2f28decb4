// A group's committed offsets: OffsetFetch and OffsetCommit at the group's
// coordinator. Commits from outside the group (reset-offsets) use
// generation -1 and an empty member id, which Kafka accepts only while the
// group has no members.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/cluster.h"

namespace runnel::cli {

using TopicPartition = std::pair<std::string, int32_t>;

// Committed offsets of `group_id`; `partitions` nullopt asks for every
// partition the group committed. Partitions without a commit are absent.
std::map<TopicPartition, int64_t> fetch_committed(Cluster& cluster, const std::string& group_id,
                                                  const std::optional<std::vector<TopicPartition>>& partitions);

struct GenerationInfo {
  int32_t generation_id = -1;
  std::string member_id;
};

// Commits `offsets`; KafkaError on the first partition refused.
void commit_offsets(Cluster& cluster, const std::string& group_id, const GenerationInfo& generation,
                    const std::map<TopicPartition, int64_t>& offsets);

}  // namespace runnel::cli
