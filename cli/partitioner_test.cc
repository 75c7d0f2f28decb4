#include "cli/partitioner.h"

#include <catch2/catch.hpp>
#include <string>

using namespace runnel::cli;

namespace {
runnel::protocol::ByteView bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
}  // namespace

TEST_CASE("murmur2 gives the values of Kafka's Utils.murmur2 (UtilsTest.testMurmur2)") {
  CHECK(murmur2(bytes("21")) == -973932308);
  CHECK(murmur2(bytes("foobar")) == -790332482);
  CHECK(murmur2(bytes("a-little-bit-long-string")) == -985981536);
  CHECK(murmur2(bytes("a-little-bit-longer-string")) == -1486304829);
  CHECK(murmur2(bytes("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8")) == -58897971);
  CHECK(murmur2(bytes("abc")) == 479470107);
  // Every tail length (0..3 bytes after the 4-byte blocks).
  CHECK(murmur2(bytes("1")) == -1993445489);
  CHECK(murmur2(bytes("12")) == 126087238);
  CHECK(murmur2(bytes("123")) == -267702483);
  CHECK(murmur2(bytes("1234")) == -1614185708);
  CHECK(murmur2(bytes("12345")) == -1188365604);
}

TEST_CASE("a key's partition is toPositive(murmur2) % partitions, not abs()") {
  // -973932308 & 0x7fffffff = 1173551340; abs() would give 973932308.
  CHECK(partition_for_key(bytes("21"), 7) == 1173551340 % 7);
  CHECK(partition_for_key(bytes("21"), 7) != 973932308 % 7);
  CHECK(partition_for_key(bytes("abc"), 3) == 479470107 % 3);
  CHECK(partition_for_key(bytes("anything"), 1) == 0);
}

TEST_CASE("the sticky partition stays until a batch is sealed, then moves on") {
  StickyPartitioner s;
  int32_t first = s.current("t", 4);
  CHECK(first >= 0);
  CHECK(first < 4);
  CHECK(s.current("t", 4) == first);
  s.next("t", 4);
  CHECK(s.current("t", 4) == (first + 1) % 4);
  // Fewer partitions than the remembered one (a new topic of the same name): pick again, in range.
  CHECK(s.current("t", 1) == 0);
}
