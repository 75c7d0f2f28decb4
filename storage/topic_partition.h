// A partition's name, and its directory name in a log dir: "<topic>-<partition>".
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace runnel::storage {

struct TopicPartition {
  std::string topic;
  int32_t partition = 0;

  auto operator<=>(const TopicPartition&) const = default;
  std::string dir_name() const { return topic + "-" + std::to_string(partition); }
  // "<topic>-<partition>" back into its parts; nullopt for anything else
  // (including Kafka's "-delete", "-future" and "-stray" directories).
  static std::optional<TopicPartition> from_dir_name(std::string_view name);
};

}  // namespace runnel::storage
