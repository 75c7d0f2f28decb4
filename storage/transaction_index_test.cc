#include <catch2/catch.hpp>

#include "storage/test_util.h"
#include "storage/transaction_index.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

TransactionIndex open_index(const fs::path& p, int64_t start = 0) {
  auto index = TransactionIndex::open(p, start);
  REQUIRE(index);
  return std::move(*index);
}

}  // namespace

TEST_CASE("a txnindex entry is Kafka's 34 big-endian bytes: version 0 then four int64", "[storage][txnindex]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000100.txnindex";
  auto index = open_index(p, 100);
  REQUIRE_FALSE(index.append({0x0102030405060708, 100, 0x1112, 0x0A0B0C0D0E0F1011}));
  REQUIRE_FALSE(index.append({-1, 200, 0x1113, 7}));
  const Bytes expected = {
      0x00, 0x00,                                      // version 0
      0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,  // producer id
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64,  // first offset 100
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x12,  // last offset
      0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11,  // last stable offset
      0x00, 0x00,                                      //
      0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,  // producer id -1
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8,  // 200
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x11, 0x13,  //
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07,  //
  };
  REQUIRE(file_bytes(p) == expected);
  auto reopened = open_index(p, 100);
  REQUIRE(reopened.sane());
  REQUIRE(reopened.all() == std::vector<AbortedTxn>{{0x0102030405060708, 100, 0x1112, 0x0A0B0C0D0E0F1011},
                                                    {-1, 200, 0x1113, 7}});
}

TEST_CASE("a txnindex file exists only once an entry is appended", "[storage][txnindex]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000000.txnindex";
  auto index = open_index(p);
  REQUIRE(index.all().empty());
  REQUIRE_FALSE(index.file());
  REQUIRE_FALSE(fs::exists(p));
  REQUIRE_FALSE(index.truncate_to(0));
  REQUIRE_FALSE(index.flush());
  REQUIRE_FALSE(fs::exists(p));
  REQUIRE_FALSE(index.append({1, 0, 5, 0}));
  REQUIRE(fs::file_size(p) == 34);
  REQUIRE_FALSE(index.reset());
  REQUIRE_FALSE(fs::exists(p));
  REQUIRE(index.all().empty());
  REQUIRE_FALSE(index.append({1, 6, 9, 6}));  // reset allows any offset again
  REQUIRE(open_index(p).all() == std::vector<AbortedTxn>{{1, 6, 9, 6}});
}

TEST_CASE("a txnindex refuses an entry whose last offset is not above the previous one", "[storage][txnindex]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000000.txnindex";
  auto index = open_index(p);
  REQUIRE_FALSE(index.append({1, 0, 10, 0}));
  REQUIRE(index.append({2, 3, 10, 0}) == StorageErrc::invalid_argument);
  REQUIRE(index.append({2, 3, 9, 0}) == StorageErrc::invalid_argument);
  REQUIRE(fs::file_size(p) == 34);
  REQUIRE_FALSE(index.append({2, 3, 11, 0}));
  // The order holds across a reopen: it is checked against the file's entries.
  auto reopened = open_index(p);
  REQUIRE(reopened.append({3, 4, 11, 0}) == StorageErrc::invalid_argument);
  REQUIRE(reopened.all().size() == 2);
}

TEST_CASE("collect returns the entries overlapping the fetch range and stops at a last stable offset past it",
          "[storage][txnindex]") {
  TempDir tmp;
  auto index = open_index(tmp.path / "00000000000000000000.txnindex");
  const AbortedTxn a{1, 0, 10, 0}, b{2, 5, 20, 5}, c{3, 21, 30, 40}, d{4, 31, 50, 45};
  for (const auto& t : {a, b, c, d}) REQUIRE_FALSE(index.append(t));
  // Kafka's test: lastOffset >= fetchOffset and firstOffset < upperBoundOffset.
  auto r = index.collect(11, 21);
  REQUIRE(r.aborted == std::vector<AbortedTxn>{b});
  REQUIRE(r.complete);  // c begins at the upper bound, but its last stable offset passes it
  r = index.collect(10, 22);
  REQUIRE(r.aborted == std::vector<AbortedTxn>{a, b, c});
  REQUIRE(r.complete);  // c's last stable offset 40 >= 22: no later entry can overlap
  r = index.collect(0, 41);
  REQUIRE(r.aborted == std::vector<AbortedTxn>{a, b, c, d});
  REQUIRE(r.complete);
  r = index.collect(0, 46);
  REQUIRE(r.aborted == std::vector<AbortedTxn>{a, b, c, d});
  REQUIRE_FALSE(r.complete);
  REQUIRE(index.collect(51, 60).aborted.empty());
}

TEST_CASE("txnindex truncate_to drops the entries ending at or after the offset", "[storage][txnindex]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000000.txnindex";
  auto index = open_index(p);
  for (const auto& t : std::vector<AbortedTxn>{{1, 0, 10, 0}, {2, 5, 20, 5}, {3, 21, 30, 21}})
    REQUIRE_FALSE(index.append(t));
  REQUIRE_FALSE(index.truncate_to(31));
  REQUIRE(index.all().size() == 3);
  REQUIRE_FALSE(index.truncate_to(20));
  REQUIRE(index.all() == std::vector<AbortedTxn>{{1, 0, 10, 0}});
  REQUIRE(fs::file_size(p) == 34);
  REQUIRE_FALSE(index.append({2, 12, 15, 12}));  // the order check follows the truncation
  REQUIRE(open_index(p).all() == std::vector<AbortedTxn>{{1, 0, 10, 0}, {2, 12, 15, 12}});
  REQUIRE_FALSE(index.truncate_to(0));
  REQUIRE(index.all().empty());
  REQUIRE(fs::file_size(p) == 0);
}

TEST_CASE("a txnindex that is not whole version-0 entries at or above its base fails the sanity check",
          "[storage][txnindex]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000100.txnindex";
  {
    auto index = open_index(p, 100);
    REQUIRE_FALSE(index.append({1, 100, 110, 100}));
    REQUIRE_FALSE(index.append({1, 111, 120, 111}));
  }
  const Bytes good = file_bytes(p);
  REQUIRE(open_index(p, 100).sane());
  SECTION("a torn entry") {
    write_bytes(p, Bytes(good.begin(), good.end() - 1));
  }
  SECTION("a version other than 0") {
    Bytes b = good;
    b[34 + 1] = 1;
    write_bytes(p, b);
  }
  SECTION("an entry ending below the segment's base offset") {
    Bytes b = good;
    b[18 + 7] = 99;  // the first entry's last offset: 99
    write_bytes(p, b);
  }
  REQUIRE_FALSE(open_index(p, 100).sane());
}

TEST_CASE("txnindex rename_to moves the file or only the name when there is none", "[storage][txnindex]") {
  TempDir tmp;
  fs::path p = tmp.path / "00000000000000000000.txnindex";
  auto index = open_index(p);
  REQUIRE_FALSE(index.rename_to(tmp.path / "a.deleted"));
  REQUIRE(index.path() == tmp.path / "a.deleted");
  REQUIRE_FALSE(fs::exists(tmp.path / "a.deleted"));
  auto other = open_index(p);
  REQUIRE_FALSE(other.append({1, 0, 3, 0}));
  REQUIRE_FALSE(other.rename_to(tmp.path / "b.deleted"));
  REQUIRE_FALSE(fs::exists(p));
  REQUIRE(fs::file_size(tmp.path / "b.deleted") == 34);
  REQUIRE_FALSE(other.append({1, 4, 5, 4}));  // the open file follows the rename
  REQUIRE(fs::file_size(tmp.path / "b.deleted") == 68);
}
