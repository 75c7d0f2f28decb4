#include <catch2/catch.hpp>

#include "protocol/records/batch_builder.h"
#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

std::unique_ptr<Log> open_log(const fs::path& dir, const LogConfig& c, const FakeClock& clock, bool clean = true,
                              int64_t recovery_point = 0) {
  LogOptions o;
  o.clock = clock.clock();
  o.clean_shutdown = clean;
  o.recovery_point = recovery_point;
  auto log = Log::open(dir, c, std::move(o));
  REQUIRE(log);
  return std::move(*log);
}

}  // namespace

TEST_CASE("append assigns offsets, reads return whole batches across several segments", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  auto log = open_log(tmp.path / "t-0", small_segment_config(), clock);
  int64_t expected = 0;
  for (int i = 0; i < 60; ++i) {
    int n = 1 + i % 3;
    auto info = append(*log, batch_of(n, i, 100));
    REQUIRE(info);
    REQUIRE(info->base_offset == expected);
    REQUIRE(info->last_offset == expected + n - 1);
    REQUIRE(info->log_append_time_ms == kNoTimestamp);
    REQUIRE(info->log_start_offset == 0);
    expected += n;
  }
  REQUIRE(log->log_end_offset() == expected);
  REQUIRE(log->high_watermark() == expected);
  REQUIRE(log->segment_count() > 3);
  for (int64_t base : log->segment_base_offsets()) {
    REQUIRE(fs::exists(tmp.path / "t-0" / (Segment::file_stem(base) + ".log")));
    REQUIRE(fs::exists(tmp.path / "t-0" / (Segment::file_stem(base) + ".index")));
    REQUIRE(fs::exists(tmp.path / "t-0" / (Segment::file_stem(base) + ".timeindex")));
  }
  // Every batch comes back once, in order, with its offsets and epoch stamped.
  auto all = read_all(*log);
  REQUIRE(all.size() == 60);
  int64_t next = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    REQUIRE(all[i].tag == i);
    REQUIRE(all[i].header.base_offset == next);
    REQUIRE(all[i].header.partition_leader_epoch == 0);
    REQUIRE(all[i].crc_ok);
    next = all[i].header.last_offset() + 1;
  }
  // Reading any offset, even mid-batch, starts at the batch holding it; a
  // 1-byte limit still returns that one whole batch.
  for (int64_t o = 0; o < expected; ++o) {
    auto r = log->read(o, 1);
    REQUIRE(r);
    auto b = parse_batches(read_region(r->records));
    REQUIRE(b.size() == 1);
    REQUIRE(b[0].header.base_offset <= o);
    REQUIRE(b[0].header.last_offset() >= o);
  }
  // Limits are honoured with whole batches, within one segment.
  auto r = log->read(0, 700);
  REQUIRE(r->records.length <= 700);
  REQUIRE(static_cast<int64_t>(read_region(r->records).size()) == r->records.length);
  REQUIRE_FALSE(parse_batches(read_region(r->records)).empty());
  // No batch when min_one_batch is off and the first is larger than the limit.
  REQUIRE(log->read(0, 10, std::nullopt, false)->records.length == 0);
  // At the end: empty; beyond or before the log: out of range.
  REQUIRE(log->read(expected, 1000)->records.length == 0);
  REQUIRE(log->read(expected + 1, 1000).error() == StorageErrc::offset_out_of_range);
  REQUIRE(log->read(-1, 1000).error() == StorageErrc::offset_out_of_range);
}

TEST_CASE("append rejects bytes that are not whole v2 batches", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  auto log = open_log(tmp.path / "t-0", small_segment_config(), clock);
  Bytes b = batch_of(1, 0);
  REQUIRE(append(*log, Bytes(b.begin(), b.end() - 1)).error() == StorageErrc::invalid_record);
  Bytes bad_magic = b;
  bad_magic[records::kMagicOffset] = 1;
  REQUIRE(append(*log, bad_magic).error() == StorageErrc::invalid_record);
  REQUIRE(append(*log, Bytes()).error() == StorageErrc::invalid_record);
  REQUIRE(append(*log, batch_of(1, 0, 4000)).error() == StorageErrc::record_batch_too_large);
  REQUIRE(log->log_end_offset() == 0);
  // Two batches in one append get consecutive offsets.
  Bytes two = batch_of(3, 1);
  Bytes second = batch_of(2, 2);
  two.insert(two.end(), second.begin(), second.end());
  auto info = append(*log, two);
  REQUIRE(info->base_offset == 0);
  REQUIRE(info->last_offset == 4);
  auto all = read_all(*log);
  REQUIRE(all.size() == 2);
  REQUIRE(all[1].header.base_offset == 3);
}

TEST_CASE("offset for timestamp finds the first record at or after it", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  auto log = open_log(tmp.path / "t-0", small_segment_config(), clock);
  // Batch i holds 4 records stamped 1000*i + 0, 10, 20, 30.
  for (int i = 0; i < 40; ++i) {
    BatchSpec s;
    s.records = 4;
    s.first_timestamp = 1000 * (i + 1);
    s.timestamp_step = 10;
    s.tag = i;
    s.value_size = 60;
    Bytes b = make_batch(s);
    REQUIRE(log->append(b, 3));
  }
  REQUIRE(log->segment_count() > 3);
  auto at = [&](int64_t ts) { return log->offset_for_timestamp(ts).value(); };
  REQUIRE(at(0)->offset == 0);
  REQUIRE(at(1000)->offset == 0);
  REQUIRE(at(1001)->offset == 1);
  REQUIRE(at(1010)->offset == 1);
  REQUIRE(at(1031) -> offset == 4);
  for (int i = 0; i < 40; ++i) {
    int64_t base = 1000 * (i + 1);
    auto found = at(base + 15);
    REQUIRE(found);
    REQUIRE(found->offset == 4 * i + 2);
    REQUIRE(found->timestamp == base + 20);
    REQUIRE(found->leader_epoch == 3);
  }
  REQUIRE_FALSE(at(40000 + 31));
  auto earliest = log->offset_for_timestamp(Log::kEarliestTimestamp).value();
  REQUIRE(*earliest == TimestampAndOffset{kNoTimestamp, 0, 3});
  auto latest = log->offset_for_timestamp(Log::kLatestTimestamp).value();
  REQUIRE(*latest == TimestampAndOffset{kNoTimestamp, 160, 3});
  auto max = log->offset_for_timestamp(Log::kMaxTimestamp).value();
  REQUIRE(*max == TimestampAndOffset{40030, 159, 3});
}

TEST_CASE("message.timestamp.type=LogAppendTime stamps the batch and keeps its CRC valid", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  LogConfig c = small_segment_config();
  c.message_timestamp_type = TimestampType::log_append_time;
  auto log = open_log(tmp.path / "t-0", c, clock);
  auto info = append(*log, batch_of(3, 7, 16, /*ts=*/5));
  REQUIRE(info->log_append_time_ms == clock.now());
  auto all = read_all(*log);
  REQUIRE(all.size() == 1);
  REQUIRE(all[0].crc_ok);
  REQUIRE(all[0].header.log_append_time());
  REQUIRE(all[0].header.max_timestamp == clock.now());
  REQUIRE(log->offset_for_timestamp(clock.now()).value()->offset == 0);
  REQUIRE(log->offset_for_timestamp(Log::kMaxTimestamp).value()->offset == 0);
}

TEST_CASE("ListOffsets by timestamp finds the record inside a compressed batch", "[storage]") {
  namespace rec = runnel::protocol::records;
  TempDir tmp;
  FakeClock clock;
  auto log = open_log(tmp.path / "t-0", small_segment_config(), clock);
  REQUIRE(append(*log, batch_of(2, 1, 16, 500)));  // offsets 0-1
  // Offsets 2-5, stamped 1000, 1010, 1020, 1030, gzip: only the codec can
  // tell which record holds which time.
  std::vector<rec::Record> records(4);
  for (int i = 0; i < 4; ++i) {
    records[static_cast<size_t>(i)].offset_delta = i;
    records[static_cast<size_t>(i)].timestamp_delta = 10 * i;
  }
  rec::BatchSpec spec;
  spec.compression = rec::Compression::gzip;
  spec.base_timestamp = 1000;
  REQUIRE(append(*log, rec::build_batch(spec, records)));
  REQUIRE(log->offset_for_timestamp(1000).value()->offset == 2);
  auto found = log->offset_for_timestamp(1011).value();
  REQUIRE(found->offset == 4);
  REQUIRE(found->timestamp == 1020);
  auto max = log->offset_for_timestamp(Log::kMaxTimestamp).value();
  REQUIRE(max->offset == 5);
  REQUIRE(max->timestamp == 1030);
}

TEST_CASE("segments roll on segment.ms by batch timestamps", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  LogConfig c;
  c.segment_ms = 60000;
  auto log = open_log(tmp.path / "t-0", c, clock);
  REQUIRE(append(*log, batch_of(1, 0, 16, 100000)));
  REQUIRE(append(*log, batch_of(1, 1, 16, 160000)));  // exactly segment.ms later: no roll
  REQUIRE(log->segment_count() == 1);
  REQUIRE(append(*log, batch_of(1, 2, 16, 160001)));
  REQUIRE(log->segment_base_offsets() == std::vector<int64_t>{0, 2});
}

TEST_CASE("a full offset index or time index rolls the segment", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  LogConfig c;
  c.segment_index_bytes = 48;  // offset index: 6 entries; time index: 4, one kept for the roll
  c.index_interval_bytes = 1;  // an entry for every append but a segment's first
  SECTION("offset index") {
    auto log = open_log(tmp.path / "t-0", c, clock);
    // One timestamp for all: the time index keeps a single entry.
    for (int i = 0; i < 20; ++i) REQUIRE(append(*log, batch_of(1, i, 16, 1000)));
    REQUIRE(log->segment_base_offsets() == std::vector<int64_t>{0, 7, 14});
    REQUIRE(read_all(*log).size() == 20);
    // Rolled segments' indexes are trimmed to their entries.
    REQUIRE(fs::file_size(tmp.path / "t-0" / (Segment::file_stem(0) + ".index")) == 6 * 8);
    REQUIRE(fs::file_size(tmp.path / "t-0" / (Segment::file_stem(0) + ".timeindex")) == 12);
  }
  SECTION("time index") {
    auto log = open_log(tmp.path / "t-0", c, clock);
    for (int i = 0; i < 20; ++i) REQUIRE(append(*log, batch_of(1, i, 16, 1000 + i)));
    REQUIRE(log->segment_base_offsets() == std::vector<int64_t>{0, 4, 8, 12, 16});
    REQUIRE(fs::file_size(tmp.path / "t-0" / (Segment::file_stem(0) + ".index")) == 3 * 8);
    REQUIRE(fs::file_size(tmp.path / "t-0" / (Segment::file_stem(0) + ".timeindex")) == 3 * 12);
    REQUIRE(log->offset_for_timestamp(1009).value()->offset == 9);
  }
}

TEST_CASE("a clean close trims files and reopening restores the same log", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "t-0";
  {
    auto log = open_log(dir, small_segment_config(), clock);
    for (int i = 0; i < 30; ++i) REQUIRE(append(*log, batch_of(2, i, 80, 1000 + i), i / 10));
    REQUIRE_FALSE(log->close());
    for (int64_t base : log->segment_base_offsets()) {
      REQUIRE(fs::file_size(dir / (Segment::file_stem(base) + ".index")) % 8 == 0);
      REQUIRE(fs::file_size(dir / (Segment::file_stem(base) + ".index")) < 10 << 20);
      REQUIRE(fs::file_size(dir / (Segment::file_stem(base) + ".timeindex")) % 12 == 0);
    }
    REQUIRE(read_leader_epoch_checkpoint(dir / kLeaderEpochCheckpointFile).value() ==
            std::vector<EpochEntry>{{0, 0}, {1, 20}, {2, 40}});
  }
  auto log = open_log(dir, small_segment_config(), clock);
  REQUIRE(log->log_end_offset() == 60);
  REQUIRE(log->recovery_point() == 60);
  REQUIRE(log->leader_epochs() == std::vector<EpochEntry>{{0, 0}, {1, 20}, {2, 40}});
  REQUIRE(log->end_offset_for_epoch(1) == std::pair<int32_t, int64_t>{1, 40});
  REQUIRE(log->end_offset_for_epoch(2) == std::pair<int32_t, int64_t>{2, 60});
  auto all = read_all(*log);
  REQUIRE(all.size() == 30);
  REQUIRE(all.back().tag == 29);
  REQUIRE(log->offset_for_timestamp(1015).value()->offset == 30);
  REQUIRE(append(*log, batch_of(1, 30), 2)->base_offset == 60);
  // The reopened active segment's index grew back to its preallocated size.
  fs::path active_idx = dir / (Segment::file_stem(log->segment_base_offsets().back()) + ".index");
  REQUIRE(fs::file_size(active_idx) == (10 << 20));
}

TEST_CASE("truncate_to removes the tail, across segments", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  auto log = open_log(tmp.path / "t-0", small_segment_config(), clock);
  for (int i = 0; i < 40; ++i) REQUIRE(append(*log, batch_of(2, i, 80, 1000 + i), i < 20 ? 1 : 2));
  auto bases = log->segment_base_offsets();
  REQUIRE(bases.size() > 3);
  int64_t target = bases[1] + 4;  // a batch boundary inside the second segment
  REQUIRE_FALSE(log->truncate_to(target));
  REQUIRE(log->log_end_offset() == target);
  REQUIRE(log->segment_count() == 2);
  auto all = read_all(*log);
  REQUIRE(all.back().header.last_offset() == target - 1);
  REQUIRE(log->leader_epochs().back().start_offset < target);
  // Appends continue from the truncation point; a mid-batch offset removes
  // the whole batch that holds it.
  REQUIRE(append(*log, batch_of(2, 100), 3)->base_offset == target);
  REQUIRE_FALSE(log->truncate_to(target + 1));
  REQUIRE(log->log_end_offset() == target);
  REQUIRE_FALSE(log->truncate_fully_and_start_at(500));
  REQUIRE(log->log_start_offset() == 500);
  REQUIRE(log->log_end_offset() == 500);
  REQUIRE(log->segment_base_offsets() == std::vector<int64_t>{500});
  REQUIRE(append(*log, batch_of(1, 0), 4)->base_offset == 500);
}

TEST_CASE("flush.messages syncs on append", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  LogConfig c = small_segment_config();
  c.flush_messages = 5;
  auto log = open_log(tmp.path / "t-0", c, clock);
  for (int i = 0; i < 4; ++i) REQUIRE(append(*log, batch_of(1, i)));
  REQUIRE(log->recovery_point() == 0);
  REQUIRE(append(*log, batch_of(1, 4)));
  REQUIRE(log->recovery_point() == 5);
  // flush.ms is checked by the background flush.
  c.flush_messages = INT64_MAX;
  c.flush_ms = 1000;
  log->set_config(c);
  REQUIRE(append(*log, batch_of(1, 5)));
  REQUIRE_FALSE(log->flush_if_due(clock.now() + 999));
  REQUIRE(log->recovery_point() == 5);
  REQUIRE_FALSE(log->flush_if_due(clock.now() + 1000));
  REQUIRE(log->recovery_point() == 6);
}

TEST_CASE("segment.bytes is a hard limit: a segment takes batches while they fit", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  const int64_t b = static_cast<int64_t>(batch_of(1, 0, 100).size());
  LogConfig c;
  c.segment_bytes = static_cast<int32_t>(3 * b);
  auto log = open_log(tmp.path / "t-0", c, clock);
  for (int i = 0; i < 10; ++i) REQUIRE(append(*log, batch_of(1, i, 100)));
  REQUIRE(log->segment_base_offsets() == std::vector<int64_t>{0, 3, 6, 9});
  c.segment_bytes = static_cast<int32_t>(3 * b - 1);
  log->set_config(c);
  for (int i = 10; i < 14; ++i) REQUIRE(append(*log, batch_of(1, i, 100)));
  REQUIRE(log->segment_base_offsets() == std::vector<int64_t>{0, 3, 6, 9, 11, 13});
}
