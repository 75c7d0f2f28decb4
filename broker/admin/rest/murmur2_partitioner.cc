#include "broker/admin/rest/murmur2_partitioner.h"

namespace runnel::broker::admin::rest {

int32_t murmur2(std::string_view bytes) {
  constexpr uint32_t kSeed = 0x9747b28c;
  constexpr uint32_t kM = 0x5bd1e995;
  constexpr int kR = 24;
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])); };
  const size_t length = bytes.size();
  uint32_t h = kSeed ^ static_cast<uint32_t>(length);
  const size_t words = length / 4;
  for (size_t i = 0; i < words; ++i) {
    const size_t j = i * 4;
    uint32_t k = b(j) | b(j + 1) << 8 | b(j + 2) << 16 | b(j + 3) << 24;
    k *= kM;
    k ^= k >> kR;
    k *= kM;
    h *= kM;
    h ^= k;
  }
  const size_t tail = length & ~size_t{3};
  switch (length % 4) {
    case 3: h ^= b(tail + 2) << 16; [[fallthrough]];
    case 2: h ^= b(tail + 1) << 8; [[fallthrough]];
    case 1:
      h ^= b(tail);
      h *= kM;
  }
  h ^= h >> 13;
  h *= kM;
  h ^= h >> 15;
  return static_cast<int32_t>(h);
}

int32_t partition_for_key(std::string_view key, int32_t partitions) {
  return static_cast<int32_t>((static_cast<uint32_t>(murmur2(key)) & 0x7fffffff) % static_cast<uint32_t>(partitions));
}

}  // namespace runnel::broker::admin::rest
