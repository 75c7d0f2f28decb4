#include <catch2/catch.hpp>
#include <memory>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/compression.h"
#include "protocol/records/test_batches.h"
#include "protocol/records/validate.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;
using namespace runnel::protocol::records::testing;

namespace {

constexpr Compression kCodecs[] = {Compression::none, Compression::gzip, Compression::snappy, Compression::lz4,
                                   Compression::zstd};

// CRC-32C one bit at a time (reflected Castagnoli polynomial), independent
// of ISA-L's table-driven code.
uint32_t bitwise_crc32c(const uint8_t* p, size_t n) {
  uint32_t crc = 0xFFFFFFFF;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Records point into the reader's decompressed copy, so keep it with them.
struct ReadBack {
  std::unique_ptr<BatchRecordReader> reader;
  std::vector<Record> records;
};

ReadBack read_all(const Bytes& batch) {
  ReadBack back{std::make_unique<BatchRecordReader>(batch, 64 << 20), {}};
  Record r;
  while (back.reader->next(r)) back.records.push_back(r);
  REQUIRE(back.reader->status().ok());
  return back;
}

}  // namespace

TEST_CASE("a tiny uncompressed batch matches bytes written by hand from the format", "[records]") {
  std::string value = "hi";
  Record r;
  r.value = view_of(value);
  BatchSpec spec;
  spec.base_timestamp = 1000;
  Bytes built = build_batch(spec, std::span<const Record>(&r, 1));

  Bytes expected = {
      0, 0, 0, 0, 0, 0, 0, 0,              // baseOffset 0
      0, 0, 0, 58,                         // batchLength: 49 header bytes + 9 record bytes
      0xFF, 0xFF, 0xFF, 0xFF,              // partitionLeaderEpoch -1
      2,                                   // magic
      0x23, 0x3D, 0xAD, 0x44,              // crc, worked out separately
      0, 0,                                // attributes: no codec, CreateTime
      0, 0, 0, 0,                          // lastOffsetDelta 0
      0, 0, 0, 0, 0, 0, 0x03, 0xE8,        // baseTimestamp 1000
      0, 0, 0, 0, 0, 0, 0x03, 0xE8,        // maxTimestamp 1000
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // producerId -1
      0xFF, 0xFF,                          // producerEpoch -1
      0xFF, 0xFF, 0xFF, 0xFF,              // baseSequence -1
      0, 0, 0, 1,                          // recordsCount 1
      0x10, 0x00, 0x00, 0x00, 0x01, 0x04, 'h', 'i', 0x00,  // the record
  };
  REQUIRE(built == expected);
  // The CRC covers attributes to the end; check it bit by bit, then against
  // the literal above, so ISA-L is cross-checked both ways.
  uint32_t crc = bitwise_crc32c(expected.data() + kAttributesOffset, expected.size() - kAttributesOffset);
  REQUIRE(crc == 0x233DAD44u);
  REQUIRE(compute_batch_crc(expected) == crc);
  REQUIRE(validate_batch(expected, {.from_client = true, .walk_records = true}).ok());
}

TEST_CASE("bitwise CRC-32C agrees with ISA-L on many lengths", "[records]") {
  Bytes data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 131 + 7);
  for (size_t n = 0; n <= data.size(); n += 37)
    REQUIRE(crc32c(ByteView(data.data(), n)) == bitwise_crc32c(data.data(), n));
}

TEST_CASE("built batches validate and read back for every codec", "[records]") {
  auto s = sample_records(50, 200);
  for (auto codec : kCodecs) {
    INFO(compression_name(codec));
    Bytes batch = build_batch(sample_spec(codec), s.records);
    REQUIRE(validate_batch(batch, {.from_client = true, .walk_records = true}).ok());
    auto h = *read_batch_header(batch);
    REQUIRE(h.compression() == codec);
    REQUIRE(h.records_count == 50);
    REQUIRE(h.last_offset_delta == 49);
    REQUIRE(h.base_timestamp == 1'700'000'000'000);
    REQUIRE(h.max_timestamp == 1'700'000'000'000 + 49 * 3);
    REQUIRE(h.producer_id == 4000);
    REQUIRE(h.producer_epoch == 3);
    REQUIRE(h.base_sequence == 17);
    REQUIRE(read_all(batch).records == s.records);
  }
}

TEST_CASE("the builder sets the attribute bits it is asked for", "[records]") {
  auto s = sample_records(1);
  BatchSpec spec = sample_spec(Compression::zstd);
  spec.transactional = true;
  spec.log_append_time = true;
  spec.max_timestamp = 1'800'000'000'000;
  spec.partition_leader_epoch = 9;
  auto h = *read_batch_header(build_batch(spec, s.records));
  REQUIRE(h.attributes == (static_cast<uint16_t>(Compression::zstd) | kTransactionalBit | kTimestampTypeBit));
  REQUIRE(h.max_timestamp == 1'800'000'000'000);
  REQUIRE(h.partition_leader_epoch == 9);
}

TEST_CASE("a compression level changes the bytes, not the records", "[records]") {
  auto s = sample_records(200, 500);
  BatchSpec fast = sample_spec(Compression::zstd), small = fast;
  fast.compression_level = 1;
  small.compression_level = 19;
  Bytes a = build_batch(fast, s.records), b = build_batch(small, s.records);
  REQUIRE(a != b);
  REQUIRE(read_all(a).records == read_all(b).records);
}

TEST_CASE("recompression changes only the codec, keeping every other field", "[records]") {
  auto s = sample_records(30, 100);
  BatchSpec spec = sample_spec(Compression::snappy);
  spec.base_offset = 12345;
  spec.partition_leader_epoch = 4;
  spec.transactional = true;
  Bytes original = build_batch(spec, s.records);
  for (auto to : kCodecs) {
    INFO("snappy to " << compression_name(to));
    Bytes out;
    auto status = recompress_batch(original, to, std::nullopt, 64 << 20, out);
    REQUIRE(status.ok());
    REQUIRE(validate_batch(out, {.from_client = true, .walk_records = true}).ok());
    auto before = *read_batch_header(original), after = *read_batch_header(out);
    REQUIRE(after.compression() == to);
    REQUIRE((after.attributes & ~kCompressionMask) == (before.attributes & ~kCompressionMask));
    after.attributes = before.attributes;
    after.batch_length = before.batch_length;
    after.crc = before.crc;
    REQUIRE(after == before);
    REQUIRE(read_all(out).records == s.records);
  }
}

TEST_CASE("recompression keeps the gaps compaction left", "[records]") {
  auto s = sample_records(6);
  std::vector<Record> kept = {s.records[0], s.records[2], s.records[5]};
  BatchSpec spec = sample_spec(Compression::none);
  Bytes compacted = build_batch(spec, kept);
  REQUIRE(read_batch_header(compacted)->last_offset_delta == 5);
  Bytes out;
  REQUIRE(recompress_batch(compacted, Compression::lz4, 1, 1 << 20, out).ok());
  REQUIRE(validate_batch(out, {.from_client = false, .walk_records = true}).ok());
  REQUIRE(read_all(out).records == kept);
}

TEST_CASE("recompression refuses damaged batches instead of sealing them", "[records]") {
  Bytes batch = sample_batch(Compression::gzip);
  Bytes out;
  Bytes flipped = batch;
  flipped[kHeaderSize + 3] ^= 0x10;
  REQUIRE(recompress_batch(flipped, Compression::zstd, std::nullopt, 1 << 20, out).code == ErrorCode::corrupt_message);

  // A valid CRC over records that do not parse.
  auto h = *read_batch_header(batch);
  h.attributes = 0;
  const uint8_t junk[] = {0x7F, 0x00};
  Bytes bad = seal_raw(h, ByteView(junk, sizeof junk));
  REQUIRE(recompress_batch(bad, Compression::zstd, std::nullopt, 1 << 20, out).code == ErrorCode::invalid_record);
}
