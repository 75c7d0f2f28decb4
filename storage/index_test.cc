#include <sys/stat.h>

#include <catch2/catch.hpp>

#include <fstream>

#include "storage/offset_index.h"
#include "storage/test_util.h"
#include "storage/time_index.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

TEST_CASE("offset index preallocates, looks up the largest entry <= target, trims", "[storage]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000100.index";
  auto idx = OffsetIndex::open(p, 100, 1000);
  REQUIRE(idx);
  // 1000 rounded down to whole 8-byte entries.
  REQUIRE(fs::file_size(p) == 1000 / 8 * 8);
  REQUIRE(idx->entries() == 0);
  REQUIRE(idx->lookup(150) == OffsetPosition{100, 0});
  idx->append(110, 4100);
  idx->append(120, 8300);
  idx->append(135, 12500);
  REQUIRE(idx->lookup(99) == OffsetPosition{100, 0});
  REQUIRE(idx->lookup(110) == OffsetPosition{110, 4100});
  REQUIRE(idx->lookup(119) == OffsetPosition{110, 4100});
  REQUIRE(idx->lookup(120) == OffsetPosition{120, 8300});
  REQUIRE(idx->lookup(1000) == OffsetPosition{135, 12500});
  REQUIRE_THROWS_AS(idx->append(135, 20000), std::logic_error);
  REQUIRE(idx->sane(20000, 200));
  REQUIRE_FALSE(idx->sane(12500, 200));  // a position past the log
  REQUIRE_FALSE(idx->sane(20000, 135));  // an offset past the segment

  // Big-endian relative offset, then position.
  REQUIRE(idx->file().trim_to_valid_size().value() == 0);
  Bytes b = file_bytes(p);
  REQUIRE(b == Bytes{0, 0, 0, 10, 0, 0, 0x10, 0x04, 0, 0, 0, 20, 0, 0, 0x20, 0x6c, 0, 0, 0, 35, 0, 0, 0x30, 0xd4});

  idx->truncate_to(120);  // drops 120 and later
  REQUIRE(idx->entries() == 1);
  idx->truncate_to(115);
  REQUIRE(idx->entries() == 1);
  idx->truncate_to(0);
  REQUIRE(idx->entries() == 0);
}

TEST_CASE("truncated index entries read as the zero-filled tail in the file", "[storage]") {
  // A follower truncated to an indexed offset, then killed: the preallocated
  // file must not show the dropped entries to the next open or to anyone
  // comparing replicas' files (cluster_power_loss_test found them there).
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000100.index";
  auto idx = OffsetIndex::open(p, 100, 80);
  REQUIRE(idx);
  idx->append(110, 4100);
  idx->append(120, 8300);
  idx->append(135, 12500);
  idx->truncate_to(120);
  REQUIRE(idx->entries() == 1);
  Bytes b = file_bytes(p);
  REQUIRE(b.size() == 80);
  REQUIRE(Bytes(b.begin(), b.begin() + 8) == Bytes{0, 0, 0, 10, 0, 0, 0x10, 0x04});
  REQUIRE(Bytes(b.begin() + 8, b.end()) == Bytes(72, 0));

  fs::path tp = tmp.path / "00000000000000000100.timeindex";
  auto times = TimeIndex::open(tp, 100, 120);
  REQUIRE(times);
  times->maybe_append(1000, 110);
  times->maybe_append(2000, 120);
  times->truncate_to(120);
  REQUIRE(times->entries() == 1);
  Bytes t = file_bytes(tp);
  REQUIRE(Bytes(t.begin() + 12, t.end()) == Bytes(t.size() - 12, 0));
}

TEST_CASE("offset index reopened trusts nothing it cannot check", "[storage]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000000.index";
  {
    auto idx = OffsetIndex::open(p, 0, 80);
    REQUIRE(idx);
    idx->append(5, 100);
    idx->append(9, 200);
    REQUIRE_FALSE(idx->file().close());
  }
  auto idx = OffsetIndex::open(p, 0, 80);
  REQUIRE(idx->entries() == 2);
  REQUIRE(idx->sane(300, 10));
  // A preallocated file left by a crash: zero entries after the real ones.
  REQUIRE_FALSE(idx->file().resize(80));
  auto again = OffsetIndex::open(p, 0, 80);
  REQUIRE(again->entries() == 10);
  REQUIRE_FALSE(again->sane(300, 10));
  // A size that is not a whole number of entries.
  REQUIRE_FALSE(again->file().resize(80));
  again->file().unmap();
  REQUIRE(::truncate(p.c_str(), 13) == 0);
  auto odd = OffsetIndex::open(p, 0, 80);
  REQUIRE_FALSE(odd->sane(300, 10));
}

TEST_CASE("offset index is full at its preallocated size", "[storage]") {
  TempDir tmp;
  auto idx = OffsetIndex::open(tmp.path / "00000000000000000000.index", 0, 20);
  REQUIRE(idx->file().max_entries() == 2);
  idx->append(1, 10);
  REQUIRE_FALSE(idx->is_full());
  idx->append(2, 20);
  REQUIRE(idx->is_full());
  REQUIRE_THROWS_AS(idx->append(3, 30), std::logic_error);
}

TEST_CASE("time index appends only when the timestamp grows and keeps a slot for the roll", "[storage]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000050.timeindex";
  auto idx = TimeIndex::open(p, 50, 48);
  REQUIRE(idx);
  REQUIRE(fs::file_size(p) == 48);
  REQUIRE(idx->file().max_entries() == 4);
  REQUIRE(idx->lookup(5) == TimestampOffset{kNoTimestamp, 50});
  REQUIRE_FALSE(idx->maybe_append(1000, 52));
  REQUIRE_FALSE(idx->maybe_append(1000, 55));  // same timestamp: no entry
  REQUIRE(idx->entries() == 1);
  REQUIRE_FALSE(idx->maybe_append(2000, 60));
  REQUIRE_FALSE(idx->is_full());
  REQUIRE_FALSE(idx->maybe_append(3000, 70));
  REQUIRE(idx->is_full());  // the last slot is reserved
  REQUIRE_THROWS_AS((void)idx->maybe_append(4000, 80), std::logic_error);
  REQUIRE_FALSE(idx->maybe_append(4000, 80, /*skip_full_check=*/true));
  REQUIRE_THROWS_AS((void)idx->maybe_append(5000, 75, true), std::logic_error);
  REQUIRE(idx->lookup(999) == TimestampOffset{kNoTimestamp, 50});
  REQUIRE(idx->lookup(1000) == TimestampOffset{1000, 52});
  REQUIRE(idx->lookup(2999) == TimestampOffset{2000, 60});
  REQUIRE(idx->lookup(99999) == TimestampOffset{4000, 80});
  REQUIRE(idx->sane(100));
  REQUIRE_FALSE(idx->sane(80));
  idx->truncate_to(61);
  REQUIRE(idx->entries() == 2);
  REQUIRE(idx->last_entry() == TimestampOffset{2000, 60});
  REQUIRE_FALSE(idx->file().trim_to_valid_size());
  Bytes b = file_bytes(p);
  REQUIRE(b.size() == 24);
  REQUIRE(Bytes(b.begin(), b.begin() + 12) == Bytes{0, 0, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0, 2});
}

TEST_CASE("index files are sparse, and each slot's blocks are allocated before the map writes it", "[storage]") {
  // A sparse page that a full disk cannot back raises SIGBUS when written
  // through the map; allocating the next slot's chunk first turns a full
  // disk into ENOSPC from append. Unwritten parts stay sparse, as Kafka's
  // are, so an idle partition's 10 MiB indexes cost no disk.
  TempDir tmp;
  auto allocated = [](const fs::path& p) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    return static_cast<int64_t>(st.st_blocks) * 512;
  };
  fs::path p = tmp.path / "00000000000000000000.index";
  auto idx = OffsetIndex::open(p, 0, 4 << 20);
  REQUIRE(idx);
  REQUIRE(idx->file().length() == 4 << 20);
  REQUIRE(allocated(p) < 64 * 1024);
  REQUIRE_FALSE(idx->append(1, 10));
  REQUIRE(allocated(p) >= 8);
  REQUIRE(allocated(p) < 1 << 20);
  // Every written slot is backed, a chunk ahead at a time.
  for (int64_t i = 2; i <= 20'000; ++i) REQUIRE_FALSE(idx->append(i, i * 10));
  REQUIRE(allocated(p) >= 20'000 * 8);
  REQUIRE(allocated(p) < 4 << 20);

  // Grown back after a trim (make_active()): sparse again beyond the entries.
  REQUIRE_FALSE(idx->file().resize(8 * 100));
  REQUIRE_FALSE(idx->file().resize(4 << 20));
  REQUIRE(idx->file().length() == 4 << 20);
  REQUIRE_FALSE(idx->append(20'001, 200'010));

  // The time index backs its slots the same way.
  fs::path q = tmp.path / "00000000000000000000.timeindex";
  auto ti = TimeIndex::open(q, 0, 4 << 20);
  REQUIRE(ti);
  REQUIRE(allocated(q) < 64 * 1024);
  REQUIRE_FALSE(ti->maybe_append(1000, 1));
  REQUIRE(allocated(q) >= 12);
}
