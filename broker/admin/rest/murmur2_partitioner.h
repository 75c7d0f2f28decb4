// The partition Kafka's Java producer picks for a keyed record
// (BuiltInPartitioner.partitionForKey): murmur2 of the key bytes, made
// positive by clearing the sign bit, modulo the partition count. REST
// Proxy produces through that producer, so a key lands where it would from
// any Java client (and from librdkafka's murmur2_random partitioner).
#pragma once

#include <cstdint>
#include <string_view>

namespace runnel::broker::admin::rest {

// Kafka's Utils.murmur2 (seed 0x9747b28c), as a signed 32-bit value.
int32_t murmur2(std::string_view bytes);
int32_t partition_for_key(std::string_view key, int32_t partitions);

}  // namespace runnel::broker::admin::rest
