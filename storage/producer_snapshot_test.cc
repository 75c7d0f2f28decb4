#include <catch2/catch.hpp>

#include "storage/producer_snapshot.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

// CRC-32C bit by bit (reflected polynomial 0x82F63B78), independent of the
// table/ISA-L code under test.
uint32_t reference_crc32c(const Bytes& bytes, size_t from) {
  uint32_t crc = 0xFFFFFFFF;
  for (size_t i = from; i < bytes.size(); ++i) {
    crc ^= bytes[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0x82F63B78 & (0u - (crc & 1)));
  }
  return ~crc;
}

void put(Bytes& out, uint64_t v, int size) {
  for (int i = size - 1; i >= 0; --i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

Bytes as_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

ProducerSnapshotEntry entry(int64_t pid, int16_t epoch, int32_t last_seq, int64_t last_offset, int32_t delta,
                            int64_t ts) {
  ProducerSnapshotEntry e;
  e.producer_id = pid;
  e.epoch = epoch;
  e.last_sequence = last_seq;
  e.last_offset = last_offset;
  e.offset_delta = delta;
  e.timestamp = ts;
  return e;
}

LogConfig small_segments() {
  LogConfig c;
  c.segment_bytes = 1024;
  c.file_delete_delay_ms = 0;
  return c;
}

}  // namespace

// As the partition does: a snapshot (of no producers) wherever an append rolls.
static Result<AppendInfo> append_snapshotting(Log& log, Bytes batch) {
  auto info = append(log, std::move(batch));
  if (info && info->rolled_at >= 0) REQUIRE_FALSE(write_producer_snapshot(log.dir(), info->rolled_at, {}));
  return info;
}

TEST_CASE("the reference CRC-32C matches the standard check value", "[snapshot]") {
  Bytes check{'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  REQUIRE(reference_crc32c(check, 0) == 0xE3069283);
}

TEST_CASE("a snapshot is Kafka's version-1 layout byte for byte", "[snapshot]") {
  std::vector<ProducerSnapshotEntry> entries{entry(0x0102030405060708, 3, 9, 41, 4, 1'700'000'000'123),
                                             entry(77, 0, INT32_MAX, 5, 0, -1)};
  entries[1].coordinator_epoch = 12;
  entries[1].current_txn_first_offset = 4;

  Bytes expected;
  put(expected, 1, 2);  // version
  put(expected, 0, 4);  // CRC, patched below
  put(expected, 2, 4);  // entry count
  for (const auto& e : entries) {
    put(expected, static_cast<uint64_t>(e.producer_id), 8);
    put(expected, static_cast<uint16_t>(e.epoch), 2);
    put(expected, static_cast<uint32_t>(e.last_sequence), 4);
    put(expected, static_cast<uint64_t>(e.last_offset), 8);
    put(expected, static_cast<uint32_t>(e.offset_delta), 4);
    put(expected, static_cast<uint64_t>(e.timestamp), 8);
    put(expected, static_cast<uint32_t>(e.coordinator_epoch), 4);
    put(expected, static_cast<uint64_t>(e.current_txn_first_offset), 8);
  }
  REQUIRE(expected.size() == 10 + 2 * 46);
  uint32_t crc = reference_crc32c(expected, 6);
  for (int i = 0; i < 4; ++i) expected[2 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));

  REQUIRE(as_bytes(encode_producer_snapshot(entries)) == expected);
  auto back = decode_producer_snapshot(expected);
  REQUIRE(back);
  REQUIRE(*back == entries);
}

TEST_CASE("an empty snapshot is ten bytes", "[snapshot]") {
  Bytes bytes = as_bytes(encode_producer_snapshot({}));
  Bytes expected{0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
  uint32_t crc = reference_crc32c(expected, 6);
  for (int i = 0; i < 4; ++i) expected[2 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
  REQUIRE(bytes == expected);
  auto back = decode_producer_snapshot(bytes);
  REQUIRE(back);
  REQUIRE(back->empty());
}

TEST_CASE("a damaged snapshot is corrupt", "[snapshot]") {
  Bytes good = as_bytes(encode_producer_snapshot(std::vector{entry(5, 1, 10, 100, 2, 1000)}));
  REQUIRE(decode_producer_snapshot(good));

  SECTION("a flipped entry byte fails the CRC") {
    Bytes b = good;
    b[20] ^= 0x40;
    REQUIRE(decode_producer_snapshot(b).error() == StorageErrc::corrupt_checkpoint);
  }
  SECTION("a flipped CRC byte") {
    Bytes b = good;
    b[3] ^= 0x01;
    REQUIRE(decode_producer_snapshot(b).error() == StorageErrc::corrupt_checkpoint);
  }
  SECTION("another version, even with a valid CRC") {
    Bytes b = good;
    b[1] = 2;
    REQUIRE(decode_producer_snapshot(b).error() == StorageErrc::corrupt_checkpoint);
  }
  SECTION("a torn file") {
    Bytes b(good.begin(), good.end() - 7);
    REQUIRE(decode_producer_snapshot(b).error() == StorageErrc::corrupt_checkpoint);
    REQUIRE(decode_producer_snapshot(Bytes{0, 1, 0}).error() == StorageErrc::corrupt_checkpoint);
  }
  SECTION("a count the bytes do not back, CRC recomputed") {
    Bytes b = good;
    b[9] = 2;
    uint32_t crc = reference_crc32c(b, 6);
    for (int i = 0; i < 4; ++i) b[2 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
    REQUIRE(decode_producer_snapshot(b).error() == StorageErrc::corrupt_checkpoint);
  }
}

TEST_CASE("snapshot files are named by their 20-digit offset and listed in order", "[snapshot]") {
  TempDir d;
  REQUIRE(producer_snapshot_path(d.path, 1234).filename() == "00000000000000001234.snapshot");
  for (int64_t o : {300, 5, 40}) REQUIRE_FALSE(write_producer_snapshot(d.path, o, std::vector{entry(o, 0, 0, o, 0, 1)}));
  write_bytes(d.path / "00000000000000000007.snapshot.deleted", Bytes{1});
  write_bytes(d.path / "12.snapshot", Bytes{1});
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{5, 40, 300});
  auto read = read_producer_snapshot(d.path, 40);
  REQUIRE(read);
  REQUIRE(read->at(0).producer_id == 40);

  REQUIRE_FALSE(delete_producer_snapshots_before(d.path, 40));
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{40, 300});
  REQUIRE_FALSE(delete_producer_snapshots_after(d.path, 40));
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{40});
}

TEST_CASE("stray snapshots go at load but the newest one past every segment stays", "[snapshot]") {
  TempDir d;
  for (int64_t o : {0, 10, 15, 20, 25, 30}) REQUIRE_FALSE(write_producer_snapshot(d.path, o, {}));
  std::vector<int64_t> bases{0, 10, 20};
  REQUIRE_FALSE(remove_stray_producer_snapshots(d.path, bases));
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{0, 10, 20, 30});

  // A stray below the last segment base is not the clean-shutdown one.
  REQUIRE_FALSE(write_producer_snapshot(d.path, 35, {}));
  std::vector<int64_t> more{0, 10, 20, 40};
  REQUIRE_FALSE(remove_stray_producer_snapshots(d.path, more));
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{0, 10, 20});
}

TEST_CASE("an append that rolls reports the new segment's base, the log writes no producer snapshot itself", "[snapshot][log]") {
  TempDir d;
  FakeClock clock;
  auto log = Log::open(d.path, small_segments(), options_with(clock));
  REQUIRE(log);
  std::vector<int64_t> rolled;
  while ((*log)->segment_count() < 3) {
    auto info = append(**log, batch_of(4, 1, 100));
    REQUIRE(info);
    if (info->rolled_at >= 0) {
      REQUIRE(info->rolled_at == info->base_offset);  // the batch opens the new segment
      rolled.push_back(info->rolled_at);
    }
  }
  auto bases = (*log)->segment_base_offsets();
  REQUIRE(rolled == std::vector<int64_t>{bases[1], bases[2]});
  // The producer state is the partition's: it writes the snapshots.
  REQUIRE(list_producer_snapshots(d.path).empty());
  REQUIRE_FALSE((*log)->close());
  REQUIRE(list_producer_snapshots(d.path).empty());
}

TEST_CASE("deleted segments take their snapshots, truncation drops the ones above the end", "[snapshot][log]") {
  TempDir d;
  FakeClock clock;
  auto log = Log::open(d.path, small_segments(), options_with(clock));
  REQUIRE(log);
  while ((*log)->segment_count() < 5) REQUIRE(append_snapshotting(**log, batch_of(4, 1, 100)));
  auto bases = (*log)->segment_base_offsets();
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{bases[1], bases[2], bases[3], bases[4]});

  REQUIRE((*log)->delete_records(bases[2] + 1));
  REQUIRE((*log)->delete_old_segments());
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{bases[2], bases[3], bases[4]});

  REQUIRE_FALSE((*log)->truncate_to(bases[3] + 1));
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{bases[2], bases[3]});
  (*log)->abandon_for_testing();
}

TEST_CASE("after a recovery point checkpoint only the last two segments' snapshots stay", "[snapshot][log]") {
  TempDir d;
  FakeClock clock;
  auto log = Log::open(d.path, small_segments(), options_with(clock));
  REQUIRE(log);
  while ((*log)->segment_count() < 5) REQUIRE(append_snapshotting(**log, batch_of(4, 1, 100)));
  auto bases = (*log)->segment_base_offsets();

  // Nothing synced yet: the recovery point (0) keeps every snapshot.
  REQUIRE_FALSE((*log)->delete_snapshots_after_recovery_point_checkpoint());
  REQUIRE(list_producer_snapshots(d.path).size() == 4);

  REQUIRE_FALSE((*log)->sync());
  REQUIRE_FALSE((*log)->delete_snapshots_after_recovery_point_checkpoint());
  REQUIRE(list_producer_snapshots(d.path) == std::vector<int64_t>{bases[3], bases[4]});
  (*log)->abandon_for_testing();
}
