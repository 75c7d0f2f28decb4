// validate_batch() on batches broken on purpose, LevelDB log_test style: each
// case checks the exact outcome, and none may crash (run under ASan/UBSan).
#include <catch2/catch.hpp>

#include "protocol/records/compression.h"
#include "protocol/records/test_batches.h"
#include "protocol/records/validate.h"

using namespace runnel::protocol;
using namespace runnel::protocol::records;
using namespace runnel::protocol::records::testing;

namespace {

constexpr Compression kCodecs[] = {Compression::none, Compression::gzip, Compression::snappy, Compression::lz4,
                                   Compression::zstd};

constexpr ValidateOptions kClientWalk{.from_client = true, .walk_records = true};
constexpr ValidateOptions kLogWalk{.from_client = false, .walk_records = true};

bool in_crc_coverage(size_t i) { return i >= kAttributesOffset; }

Bytes with_records_section(const Bytes& batch, ByteView section, int32_t count, int32_t last_offset_delta) {
  auto h = *read_batch_header(batch);
  h.records_count = count;
  h.last_offset_delta = last_offset_delta;
  return seal_raw(h, section);
}

}  // namespace

TEST_CASE("a batch truncated at every byte is CORRUPT_MESSAGE", "[records]") {
  for (auto codec : kCodecs) {
    Bytes batch = sample_batch(codec, 3);
    for (size_t n = 0; n < batch.size(); ++n) {
      INFO(compression_name(codec) << " cut at " << n);
      auto s = validate_batch(ByteView(batch.data(), n), kClientWalk);
      REQUIRE(s.code == ErrorCode::corrupt_message);
    }
  }
}

TEST_CASE("a batch with trailing bytes is CORRUPT_MESSAGE", "[records]") {
  Bytes batch = sample_batch();
  batch.push_back(0);
  REQUIRE(validate_batch(batch).code == ErrorCode::corrupt_message);
}

TEST_CASE("flipping any byte is caught, except the fields the CRC leaves out", "[records]") {
  for (auto codec : kCodecs) {
    Bytes batch = sample_batch(codec, 3);
    for (size_t i = 0; i < batch.size(); ++i) {
      for (uint8_t mask : {uint8_t{0x01}, uint8_t{0xFF}}) {
        Bytes damaged = batch;
        damaged[i] ^= mask;
        INFO(compression_name(codec) << " byte " << i << " ^ " << int{mask});
        auto s = validate_batch(damaged, kClientWalk);
        bool uncovered = i < kBatchLengthOffset ||
                         (i >= kPartitionLeaderEpochOffset && i < kMagicOffset);
        if (uncovered) {
          // baseOffset and partitionLeaderEpoch: the broker rewrites them in
          // place, so the CRC does not cover them.
          REQUIRE(s.ok());
        } else {
          REQUIRE(s.code == ErrorCode::corrupt_message);
          if (in_crc_coverage(i)) REQUIRE(s.message.find("CRC") != std::string::npos);
        }
      }
    }
  }
}

TEST_CASE("flipping any covered byte and fixing the CRC never crashes", "[records]") {
  int ok = 0, corrupt = 0, invalid = 0;
  for (auto codec : kCodecs) {
    Bytes batch = sample_batch(codec, 4);
    for (size_t i = kAttributesOffset; i < batch.size(); ++i) {
      for (uint8_t mask : {uint8_t{0x01}, uint8_t{0x40}, uint8_t{0xFF}}) {
        Bytes damaged = batch;
        damaged[i] ^= mask;
        fix_crc(damaged);
        INFO(compression_name(codec) << " byte " << i << " ^ " << int{mask});
        for (bool client : {true, false}) {
          auto s = validate_batch(
              damaged, {.from_client = client, .walk_records = true, .max_decompressed_bytes = 1 << 20});
          // Some flips leave a valid batch (a changed value byte, a timestamp);
          // the rest must come out as one of the two batch errors.
          REQUIRE((s.ok() || s.code == ErrorCode::corrupt_message || s.code == ErrorCode::invalid_record));
          ok += s.ok();
          corrupt += s.code == ErrorCode::corrupt_message;
          invalid += s.code == ErrorCode::invalid_record;
        }
      }
    }
  }
  // The damage reached every kind of check, not just one.
  CHECK(ok > 0);
  CHECK(corrupt > 0);
  CHECK(invalid > 0);
}

TEST_CASE("magic other than 2 is CORRUPT_MESSAGE", "[records]") {
  Bytes batch = sample_batch();
  batch[kMagicOffset] = 1;
  auto s = validate_batch(batch);
  REQUIRE(s.code == ErrorCode::corrupt_message);
  REQUIRE(s.message.find("magic") != std::string::npos);
}

TEST_CASE("batchLength below the header size is CORRUPT_MESSAGE", "[records]") {
  Bytes batch = sample_batch();
  batch.resize(kHeaderSize);
  batch[kBatchLengthOffset + 3] = static_cast<uint8_t>(kHeaderSize - kLogOverhead - 1);
  REQUIRE(validate_batch(batch).code == ErrorCode::corrupt_message);
}

TEST_CASE("an unknown codec is CORRUPT_MESSAGE", "[records]") {
  Bytes batch = sample_batch();
  batch[kAttributesOffset + 1] |= 0x07;
  fix_crc(batch);
  REQUIRE(validate_batch(batch).code == ErrorCode::corrupt_message);
}

TEST_CASE("recordsCount must match lastOffsetDelta + 1 from clients", "[records]") {
  Bytes batch = sample_batch(Compression::none, 5);
  auto h = *read_batch_header(batch);
  h.records_count = 4;
  write_batch_header(h, batch.data());
  fix_crc(batch);
  auto s = validate_batch(batch, {.from_client = true});
  REQUIRE(s.code == ErrorCode::invalid_record);
  REQUIRE(s.message.find("recordsCount") != std::string::npos);

  h.records_count = 0;
  h.last_offset_delta = -1;
  write_batch_header(h, batch.data());
  fix_crc(batch);
  REQUIRE(validate_batch(batch, {.from_client = true}).code == ErrorCode::invalid_record);
}

TEST_CASE("recordsCount must match the records actually present", "[records]") {
  auto s = sample_records(5);
  Bytes section;
  for (const auto& r : s.records) write_record(r, section);
  Bytes batch = sample_batch(Compression::none, 5);

  // Says 6 records, holds 5: the walk runs out of bytes.
  Bytes more = with_records_section(batch, section, 6, 5);
  REQUIRE(validate_batch(more, kLogWalk).code == ErrorCode::invalid_record);
  // Says 4, holds 5: bytes remain after the fourth.
  Bytes fewer = with_records_section(batch, section, 4, 4);
  auto status = validate_batch(fewer, kLogWalk);
  REQUIRE(status.code == ErrorCode::invalid_record);
  REQUIRE(status.message.find("remain") != std::string::npos);
  // Says 0 with records present.
  Bytes none = with_records_section(batch, section, 0, 4);
  REQUIRE(validate_batch(none, kLogWalk).code == ErrorCode::invalid_record);
  // Without the walk, only the header is judged.
  REQUIRE(validate_batch(more, {.from_client = false}).ok());
}

TEST_CASE("client offset deltas must run 0..n-1, log batches may have gaps", "[records]") {
  auto s = sample_records(4);
  s.records[2].offset_delta = 3;
  s.records[3].offset_delta = 4;
  BatchSpec spec = sample_spec();
  spec.last_offset_delta = 3;  // consistent header, inconsistent records
  Bytes batch = build_batch(spec, s.records);
  auto status = validate_batch(batch, kClientWalk);
  REQUIRE(status.code == ErrorCode::invalid_record);
  REQUIRE(status.message.find("offsetDelta") != std::string::npos);

  // The same gaps in a log batch are fine when within lastOffsetDelta...
  spec.last_offset_delta = 4;
  REQUIRE(validate_batch(build_batch(spec, s.records), kLogWalk).ok());
  // ...but not past it, nor out of order.
  spec.last_offset_delta = 3;
  REQUIRE(validate_batch(build_batch(spec, s.records), kLogWalk).code == ErrorCode::invalid_record);
  std::swap(s.records[0], s.records[1]);
  spec.last_offset_delta = 4;
  REQUIRE(validate_batch(build_batch(spec, s.records), kLogWalk).code == ErrorCode::invalid_record);
}

TEST_CASE("control batches are refused from clients, accepted from the log", "[records]") {
  // An ABORT marker: key = version 0, type 0; value = version 0, coordinator epoch 5.
  const uint8_t key[] = {0, 0, 0, 0};
  const uint8_t value[] = {0, 0, 0, 0, 0, 5};
  Record marker;
  marker.key = ByteView(key, sizeof key);
  marker.value = ByteView(value, sizeof value);
  BatchSpec spec = sample_spec();
  spec.control = true;
  spec.transactional = true;
  spec.base_sequence = -1;  // markers carry no sequence
  Bytes batch = build_batch(spec, std::span<const Record>(&marker, 1));
  auto s = validate_batch(batch, kClientWalk);
  REQUIRE(s.code == ErrorCode::invalid_record);
  REQUIRE(s.message.find("control") != std::string::npos);
  REQUIRE(validate_batch(batch, kLogWalk).ok());
}

TEST_CASE("a producerId needs a baseSequence from clients", "[records]") {
  auto recs = sample_records(2);
  BatchSpec spec = sample_spec();
  spec.base_sequence = -1;
  Bytes batch = build_batch(spec, recs.records);
  REQUIRE(validate_batch(batch).code == ErrorCode::invalid_record);
  spec.producer_id = -1;
  spec.producer_epoch = -1;
  REQUIRE(validate_batch(build_batch(spec, recs.records)).ok());
}

TEST_CASE("records with bad lengths inside a valid CRC are INVALID_RECORD", "[records]") {
  Bytes batch = sample_batch(Compression::none, 1);
  struct Case {
    const char* name;
    Bytes section;
  };
  const Case cases[] = {
      {"negative record length", {0x01}},
      {"huge record length", {0xFE, 0xFF, 0xFF, 0xFF, 0x0F}},
      {"negative key length", {0x0C, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00}},
      {"huge value length", {0x0E, 0x00, 0x00, 0x00, 0x01, 0xFE, 0xFF, 0x7F}},
      {"varint too long", {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
      {"record shorter than its fields", {0x06, 0x00, 0x00, 0x00}},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    Bytes bad = with_records_section(batch, c.section, 1, 0);
    REQUIRE(validate_batch(bad, kClientWalk).code == ErrorCode::invalid_record);
    // The same bytes compressed: still INVALID_RECORD, not a decoder crash.
    for (auto codec : {Compression::gzip, Compression::zstd}) {
      auto h = *read_batch_header(bad);
      h.attributes = static_cast<uint16_t>(codec);
      Bytes packed = seal_raw(h, compress(codec, c.section).bytes);
      REQUIRE(validate_batch(packed, kClientWalk).code == ErrorCode::invalid_record);
    }
  }
}

TEST_CASE("a decompression bomb inside a batch is refused", "[records]") {
  Bytes zeros(16 << 20, 0);
  Bytes batch = sample_batch(Compression::none, 1);
  for (auto codec : {Compression::gzip, Compression::snappy, Compression::lz4, Compression::zstd}) {
    INFO(compression_name(codec));
    auto h = *read_batch_header(batch);
    h.attributes = static_cast<uint16_t>(codec);
    Bytes bomb = seal_raw(h, compress(codec, zeros).bytes);
    auto s = validate_batch(bomb, {.from_client = true, .walk_records = true, .max_decompressed_bytes = 1 << 20});
    REQUIRE(s.code == ErrorCode::corrupt_message);
    REQUIRE(s.message.find("exceeds the limit") != std::string::npos);
    // The header alone looks fine: only the walk decompresses.
    REQUIRE(validate_batch(bomb, {.from_client = true}).ok());
  }
}

TEST_CASE("a compressed section that does not decompress is CORRUPT_MESSAGE", "[records]") {
  Bytes batch = sample_batch(Compression::none, 1);
  auto h = *read_batch_header(batch);
  h.attributes = static_cast<uint16_t>(Compression::lz4);
  const uint8_t junk[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  Bytes bad = seal_raw(h, ByteView(junk, sizeof junk));
  auto s = validate_batch(bad, kClientWalk);
  REQUIRE(s.code == ErrorCode::corrupt_message);
  REQUIRE(s.message.find("lz4") != std::string::npos);
}
