#include "storage/topic_partition.h"

#include <charconv>

namespace runnel::storage {

std::optional<TopicPartition> TopicPartition::from_dir_name(std::string_view name) {
  size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == name.size()) return std::nullopt;
  std::string_view num = name.substr(dash + 1);
  for (char c : num)
    if (c < '0' || c > '9') return std::nullopt;
  int32_t p = 0;
  auto [end, ec] = std::from_chars(num.data(), num.data() + num.size(), p);
  if (ec != std::errc() || end != num.data() + num.size()) return std::nullopt;
  std::string_view topic = name.substr(0, dash);
  // Kafka's renamed directories: "<topic>-<p>.<uuid>-delete" etc. end in a
  // non-numeric suffix and were rejected above; a '.' before it is legal in topics.
  return TopicPartition{std::string(topic), p};
}

}  // namespace runnel::storage
