#include "cli/partitioner.h"

#include <random>

namespace runnel::cli {

int32_t StickyPartitioner::current(const std::string& topic, int32_t num_partitions) {
  auto it = current_.find(topic);
  if (it == current_.end() || it->second >= num_partitions) {
    static std::minstd_rand rng{std::random_device{}()};
    it = current_.insert_or_assign(topic, static_cast<int32_t>(rng() % num_partitions)).first;
  }
  return it->second;
}

void StickyPartitioner::next(const std::string& topic, int32_t num_partitions) {
  if (num_partitions <= 1) return;
  auto it = current_.find(topic);
  if (it != current_.end()) it->second = (it->second + 1) % num_partitions;
}

}  // namespace runnel::cli
