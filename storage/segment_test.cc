#include <catch2/catch.hpp>

#include "storage/segment.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

// Appends `batch` at `offset` as Log::append would.
void put(Segment& s, Bytes batch, int64_t offset) {
  records::set_base_offset(batch.data(), offset);
  REQUIRE_FALSE(s.append(batch));
}

}  // namespace

TEST_CASE("segment files are named by the 20-digit base offset", "[storage]") {
  REQUIRE(Segment::file_stem(0) == "00000000000000000000");
  REQUIRE(Segment::file_stem(1234567) == "00000000000001234567");
  REQUIRE(Segment::log_path("/d", 5).string() == "/d/00000000000000000005.log");
  REQUIRE(Segment::index_path("/d", 5).string() == "/d/00000000000000000005.index");
  REQUIRE(Segment::time_index_path("/d", 5).string() == "/d/00000000000000000005.timeindex");
}

TEST_CASE("offset index entries land every index.interval.bytes, as Kafka places them", "[storage]") {
  TempDir tmp;
  LogConfig c;
  c.index_interval_bytes = 1000;
  auto seg = Segment::create(tmp.path, 100, c, 0);
  REQUIRE(seg);
  const Bytes sample = batch_of(2, 0, 200);
  const int64_t size = static_cast<int64_t>(sample.size());
  // Kafka: an entry for an append when more than index.interval.bytes were
  // appended since the last entry; it points at the start of that append.
  std::vector<OffsetPosition> expected;
  int64_t since = 0, offset = 100;
  for (int i = 0; i < 40; ++i) {
    if (since > c.index_interval_bytes) {
      expected.push_back({offset + 1, i * size});
      since = 0;
    }
    since += size;
    put(**seg, batch_of(2, i, 200), offset);
    offset += 2;
  }
  auto& idx = (*seg)->offset_index();
  REQUIRE(idx.entries() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) REQUIRE(idx.entry(i) == expected[i]);
  REQUIRE((*seg)->read_next_offset().value() == 180);
  // Each lookup lands on the batch holding the offset.
  for (int64_t o = 100; o < 180; ++o) {
    auto loc = (*seg)->translate_offset(o);
    REQUIRE(loc);
    REQUIRE(*loc);
    REQUIRE((*loc)->header.base_offset <= o);
    REQUIRE((*loc)->header.last_offset() >= o);
    REQUIRE((*loc)->position == (o - 100) / 2 * size);
  }
  REQUIRE_FALSE((*seg)->translate_offset(180).value());
  REQUIRE((*seg)->translate_offset(0).value()->header.base_offset == 100);
}

TEST_CASE("segment read returns whole batches within the byte limit", "[storage]") {
  TempDir tmp;
  LogConfig c;
  c.index_interval_bytes = 300;
  auto seg = Segment::create(tmp.path, 0, c, 0);
  const int64_t size = static_cast<int64_t>(batch_of(1, 0, 100).size());
  for (int i = 0; i < 30; ++i) put(**seg, batch_of(1, i, 100), i);
  for (int64_t max_bytes : {int64_t{0}, size - 1, size, size + 1, 3 * size - 1, 7 * size, 100 * size}) {
    for (int64_t start : {0, 5, 17, 29}) {
      auto r = (*seg)->read(start, max_bytes, INT64_MAX, true);
      REQUIRE(r);
      REQUIRE(*r);
      int64_t whole = std::max<int64_t>(1, std::min(max_bytes / size, 30 - start));
      REQUIRE((*r)->position == start * size);
      REQUIRE((*r)->length == whole * size);
      REQUIRE((*r)->first_offset == start);
    }
  }
  // Without min_one_batch a batch larger than the limit is not returned.
  REQUIRE((*seg)->read(3, size - 1, INT64_MAX, false).value()->length == 0);
  // max_offset (the high watermark) bounds the batches returned.
  REQUIRE((*seg)->read(3, 100 * size, 10, true).value()->length == 7 * size);
  REQUIRE((*seg)->read(10, 100 * size, 10, true).value()->length == 0);
}

TEST_CASE("segment rolls on size, time and a full index", "[storage]") {
  TempDir tmp;
  LogConfig c;
  c.segment_index_bytes = 8 * 3;
  c.index_interval_bytes = 0;  // an entry on every append after the first
  auto seg = Segment::create(tmp.path, 0, c, 1000);
  RollParams p{.max_segment_ms = 500, .max_segment_bytes = 1000, .max_timestamp_in_messages = 10,
               .max_offset_in_messages = 0, .messages_size = 100, .now_ms = 1000};
  REQUIRE_FALSE((*seg)->should_roll(p));
  Bytes b = batch_of(1, 0, 16, /*ts=*/5000);
  put(**seg, b, 0);
  p.max_timestamp_in_messages = 5500;
  REQUIRE_FALSE((*seg)->should_roll(p));
  p.max_timestamp_in_messages = 5501;  // more than segment.ms after the first batch
  REQUIRE((*seg)->should_roll(p));
  p.max_timestamp_in_messages = 5000;
  p.messages_size = 1000 - (*seg)->size();
  REQUIRE_FALSE((*seg)->should_roll(p));
  p.messages_size += 1;
  REQUIRE((*seg)->should_roll(p));
  p.messages_size = 10;
  p.max_offset_in_messages = int64_t{INT32_MAX} + 1;  // does not fit a relative offset
  REQUIRE((*seg)->should_roll(p));
  p.max_offset_in_messages = 5;
  // Time index of 24 bytes holds 2 entries, one reserved for the roll.
  put(**seg, batch_of(1, 1, 16, 6000), 1);
  REQUIRE((*seg)->time_index().entries() == 1);
  REQUIRE((*seg)->should_roll(p));
}

TEST_CASE("segment without timestamps rolls on wall-clock age", "[storage]") {
  TempDir tmp;
  LogConfig c;
  auto seg = Segment::create(tmp.path, 0, c, 1000);
  put(**seg, batch_of(1, 0, 16, /*ts=*/-1), 0);
  RollParams p{.max_segment_ms = 500, .max_segment_bytes = 1 << 20, .max_timestamp_in_messages = -1,
               .max_offset_in_messages = 1, .messages_size = 10, .now_ms = 1500};
  REQUIRE_FALSE((*seg)->should_roll(p));
  p.now_ms = 1501;
  REQUIRE((*seg)->should_roll(p));
}

TEST_CASE("an append of several batches indexes each batch as appends of one each do", "[storage]") {
  TempDir tmp;
  LogConfig c;
  c.index_interval_bytes = 500;
  fs::create_directories(tmp.path / "a");
  fs::create_directories(tmp.path / "b");
  auto one_each = Segment::create(tmp.path / "a", 0, c, 0);
  auto grouped = Segment::create(tmp.path / "b", 0, c, 0);
  REQUIRE(one_each);
  REQUIRE(grouped);
  int64_t offset = 0;
  for (int i = 0; i < 60;) {
    // Kafka's LogSegment.append walks the batches too: the entry names the
    // batch that crossed index.interval.bytes, not the append's last offset.
    Bytes group;
    for (int n = 0; n < 1 + i % 4 && i < 60; ++n, ++i) {
      Bytes b = batch_of(1 + i % 3, i, 60 + i % 5 * 40, 1'700'000'000'000 + i * 10 - (i % 5 == 2 ? 35 : 0));
      records::set_base_offset(b.data(), offset);
      offset += 1 + i % 3;
      put(**one_each, b, records::read_batch_header(b)->base_offset);
      group.insert(group.end(), b.begin(), b.end());
    }
    REQUIRE_FALSE((*grouped)->append(group));
  }
  auto& a = (*one_each)->offset_index();
  auto& b = (*grouped)->offset_index();
  REQUIRE(a.entries() > 5);
  REQUIRE(b.entries() == a.entries());
  for (size_t i = 0; i < a.entries(); ++i) REQUIRE(b.entry(i) == a.entry(i));
  auto& at = (*one_each)->time_index();
  auto& bt = (*grouped)->time_index();
  REQUIRE(at.entries() > 3);
  REQUIRE(bt.entries() == at.entries());
  for (size_t i = 0; i < at.entries(); ++i) REQUIRE(bt.entry(i) == at.entry(i));
  REQUIRE((*grouped)->max_timestamp_so_far() == (*one_each)->max_timestamp_so_far());
}
