#include <catch2/catch.hpp>
#include <cstring>

#include "protocol/records/batch_format.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;

TEST_CASE("crc32c matches the Castagnoli check value", "[records]") {
  const char* check = "123456789";
  REQUIRE(crc32c(ByteView(reinterpret_cast<const uint8_t*>(check), 9)) == 0xE3069283u);
  REQUIRE(crc32c(ByteView()) == 0u);
}

TEST_CASE("batch header writes and reads back every field", "[records]") {
  BatchHeader h;
  h.base_offset = 0x0102030405060708;
  h.batch_length = 49;
  h.partition_leader_epoch = 7;
  h.crc = 0xdeadbeef;
  h.attributes = kTimestampTypeBit | static_cast<uint16_t>(Compression::zstd);
  h.last_offset_delta = 3;
  h.base_timestamp = 1700000000000;
  h.max_timestamp = 1700000000003;
  h.producer_id = 42;
  h.producer_epoch = 2;
  h.base_sequence = INT32_MAX - 1;
  h.records_count = 4;
  uint8_t buf[kHeaderSize];
  write_batch_header(h, buf);
  auto back = read_batch_header(ByteView(buf, sizeof buf));
  REQUIRE(back);
  REQUIRE(*back == h);
  REQUIRE(back->compression() == Compression::zstd);
  REQUIRE(back->log_append_time());
  REQUIRE(back->last_offset() == h.base_offset + 3);
  // Four records from INT32_MAX-1 wrap: MAX-1, MAX, 0, 1.
  REQUIRE(back->last_sequence() == 1);
  REQUIRE_FALSE(read_batch_header(ByteView(buf, kHeaderSize - 1)));
}
