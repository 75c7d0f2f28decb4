// Kafka's default partitioner for a keyed record (the Java producer's
// BuiltInPartitioner.partitionForKey, librdkafka's murmur2_random):
// toPositive(murmur2(key)) % partitions. The CLI's producer and the REST
// endpoints both place keys with it, so a key lands where any Java client
// would put it.
#pragma once

#include <cstdint>
#include <string_view>

#include "protocol/codec/types.h"

namespace runnel::protocol {

// Kafka's Utils.murmur2: MurmurHash2, seed 0x9747b28c, as a signed int.
int32_t murmur2(ByteView data);
inline int32_t murmur2(std::string_view data) {
  return murmur2(ByteView(reinterpret_cast<const uint8_t*>(data.data()), data.size()));
}

// Utils.toPositive(murmur2(key)) % num_partitions.
int32_t partition_for_key(ByteView key, int32_t num_partitions);
inline int32_t partition_for_key(std::string_view key, int32_t num_partitions) {
  return partition_for_key(ByteView(reinterpret_cast<const uint8_t*>(key.data()), key.size()), num_partitions);
}

}  // namespace runnel::protocol
