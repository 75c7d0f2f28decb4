#include "protocol/records/key_partitioner.h"

namespace runnel::protocol {

int32_t murmur2(ByteView data) {
  const uint32_t seed = 0x9747b28c;
  const uint32_t m = 0x5bd1e995;
  const int r = 24;
  const size_t length = data.size();
  uint32_t h = seed ^ static_cast<uint32_t>(length);
  size_t i = 0;
  // Four bytes at a time, little-endian, as the Java code reads them.
  for (; i + 4 <= length; i += 4) {
    uint32_t k = static_cast<uint32_t>(data[i]) | static_cast<uint32_t>(data[i + 1]) << 8 |
                 static_cast<uint32_t>(data[i + 2]) << 16 | static_cast<uint32_t>(data[i + 3]) << 24;
    k *= m;
    k ^= k >> r;
    k *= m;
    h *= m;
    h ^= k;
  }
  switch (length - i) {
    case 3: h ^= static_cast<uint32_t>(data[i + 2]) << 16; [[fallthrough]];
    case 2: h ^= static_cast<uint32_t>(data[i + 1]) << 8; [[fallthrough]];
    case 1:
      h ^= static_cast<uint32_t>(data[i]);
      h *= m;
  }
  h ^= h >> 13;
  h *= m;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int32_t partition_for_key(ByteView key, int32_t num_partitions) {
  // toPositive clears the sign bit (it is not abs()).
  int32_t positive = murmur2(key) & 0x7fffffff;
  return positive % num_partitions;
}

}  // namespace runnel::protocol
