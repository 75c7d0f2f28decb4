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

namespace runnel::cli {

// Kafka's Utils.murmur2: MurmurHash2, seed 0x9747b28c, as a signed int.
int32_t murmur2(protocol::ByteView data);

// Utils.toPositive(murmur2(key)) % num_partitions.
int32_t partition_for_key(protocol::ByteView key, int32_t num_partitions);

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
