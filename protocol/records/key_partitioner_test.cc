#include "protocol/records/key_partitioner.h"

#include <catch2/catch.hpp>

namespace runnel::protocol {
namespace {

// The values of Kafka's own UtilsTest.testMurmur2.
TEST_CASE("murmur2 gives Kafka's values", "[records]") {
  CHECK(murmur2("21") == -973932308);
  CHECK(murmur2("foobar") == -790332482);
  CHECK(murmur2("a-little-bit-long-string") == -985981536);
  CHECK(murmur2("a-little-bit-longer-string") == -1486304829);
  CHECK(murmur2("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8") == -58897971);
  CHECK(murmur2("abc") == 479470107);
}

TEST_CASE("a key's partition is murmur2 with the sign bit cleared, modulo the count", "[records]") {
  // -973932308 & 0x7fffffff = 1173551340
  CHECK(partition_for_key("21", 7) == 1173551340 % 7);
  CHECK(partition_for_key("abc", 1) == 0);
  for (int n = 1; n < 20; ++n) {
    const int32_t p = partition_for_key("foobar", n);
    CHECK(p >= 0);
    CHECK(p < n);
  }
}

}  // namespace
}  // namespace runnel::protocol
