// Where a record goes when the user names no partition, as Kafka's Java
// producer decides (BuiltInPartitioner): a keyed record to
// toPositive(murmur2(key)) % partitions, so the same key lands on the same
// partition whichever of the two produced it; an unkeyed record to the
// current "sticky" partition, which moves on each time a batch is sealed.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "protocol/codec/types.h"
#include "protocol/records/key_partitioner.h"

namespace runnel::cli {

// Keyed records: protocol/records/key_partitioner.h.
using protocol::murmur2;
using protocol::partition_for_key;

class StickyPartitioner {
 public:
  // The partition for an unkeyed record of `topic`.
  int32_t current(const std::string& topic, int32_t num_partitions);
  // The batch of `topic` was sealed: the next unkeyed records go elsewhere.
  void next(const std::string& topic, int32_t num_partitions);

 private:
  std::map<std::string, int32_t> current_;
};

}  // namespace runnel::cli
