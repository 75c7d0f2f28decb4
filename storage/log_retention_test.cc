#include <catch2/catch.hpp>

#include <utime.h>

#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

struct Fixture {
  TempDir tmp;
  FakeClock clock;
  std::unique_ptr<Log> log;
  std::vector<int64_t> sizes;  // bytes of each segment, active last

  // One segment per entry of `stamps`: 3 batches of 2 records stamped with it.
  Fixture(const std::vector<int64_t>& stamps, LogConfig c = {}) {
    c.file_delete_delay_ms = 0;
    auto l = Log::open(tmp.path / "t-0", c, options_with(clock));
    REQUIRE(l);
    log = std::move(*l);
    for (size_t s = 0; s < stamps.size(); ++s) {
      if (s > 0) REQUIRE_FALSE(log->roll());
      for (int b = 0; b < 3; ++b) REQUIRE(append(*log, batch_of(2, s * 10 + b, 50 + 10 * s, stamps[s])));
      sizes.push_back(log->size_bytes() - total(s));
    }
  }
  int64_t total(size_t n) const {
    int64_t t = 0;
    for (size_t i = 0; i < n && i < sizes.size(); ++i) t += sizes[i];
    return t;
  }
  int64_t total() const { return total(sizes.size()); }
  void set(const std::function<void(LogConfig&)>& f) {
    LogConfig c = log->config();
    f(c);
    log->set_config(c);
  }
};

}  // namespace

TEST_CASE("retention.ms deletes whole expired segments oldest first, never the active one", "[storage]") {
  Fixture f({10000, 20000, 30000, 40000});
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 6, 12, 18});
  f.set([](LogConfig& c) { c.retention_ms = 10000; });
  *f.clock.ms = 40000;  // 30000 is exactly retention.ms old: kept
  REQUIRE(f.log->delete_old_segments().value() == 2);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{12, 18});
  REQUIRE(f.log->log_start_offset() == 12);
  REQUIRE(f.log->read(11, 100).error() == StorageErrc::offset_out_of_range);
  REQUIRE(read_all(*f.log).front().header.base_offset == 12);
  REQUIRE_FALSE(fs::exists(f.tmp.path / "t-0" / (Segment::file_stem(0) + ".log")));
  *f.clock.ms = 40001;
  REQUIRE(f.log->delete_old_segments().value() == 1);
  *f.clock.ms = 1'000'000;  // the active segment stays however old
  REQUIRE(f.log->delete_old_segments().value() == 0);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{18});
  REQUIRE(f.log->log_start_offset() == 18);
  REQUIRE(*f.log->offset_for_timestamp(Log::kEarliestTimestamp).value() == TimestampAndOffset{-1, 18, 0});
}

TEST_CASE("retention.ms stops at the first segment that is not expired", "[storage]") {
  Fixture f({50000, 10000, 10000, 60000});
  f.set([](LogConfig& c) { c.retention_ms = 10000; });
  *f.clock.ms = 55000;
  REQUIRE(f.log->delete_old_segments().value() == 0);
  *f.clock.ms = 60001;
  REQUIRE(f.log->delete_old_segments().value() == 3);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{18});
}

TEST_CASE("retention.ms uses the file's mtime for segments without timestamps", "[storage]") {
  Fixture f({-1, -1, -1});
  f.set([](LogConfig& c) { c.retention_ms = 60000; });
  int64_t now_s = f.clock.now() / 1000;
  struct utimbuf old_enough{now_s - 61, now_s - 61}, recent{now_s - 59, now_s - 59};
  REQUIRE(::utime((f.tmp.path / "t-0" / (Segment::file_stem(0) + ".log")).c_str(), &old_enough) == 0);
  REQUIRE(::utime((f.tmp.path / "t-0" / (Segment::file_stem(6) + ".log")).c_str(), &recent) == 0);
  REQUIRE(f.log->delete_old_segments().value() == 1);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{6, 12});
}

TEST_CASE("retention.bytes deletes a segment only when the excess covers it", "[storage]") {
  struct Case {
    int64_t retention;   // relative to the fixture's sizes
    std::vector<int64_t> left;
  };
  Fixture probe({1, 1, 1, 1});
  const auto s = probe.sizes;
  const int64_t total = probe.total();
  REQUIRE(s[0] != s[1]);  // segments differ in size, so boundaries are exact
  std::vector<Case> cases{
      {total, {0, 6, 12, 18}},                    // no excess
      {total + 100, {0, 6, 12, 18}},              // under the limit
      {total - s[0] + 1, {0, 6, 12, 18}},         // excess one byte short of the first segment
      {total - s[0], {6, 12, 18}},                // excess exactly the first segment
      {total - s[0] - s[1] + 1, {6, 12, 18}},     // not enough for the second
      {total - s[0] - s[1], {12, 18}},
      {0, {18}},                                  // everything but the active segment
      {-1, {0, 6, 12, 18}},                       // unlimited
  };
  for (const auto& c : cases) {
    CAPTURE(c.retention);
    Fixture f({1, 1, 1, 1});
    REQUIRE(f.sizes == s);
    f.set([&](LogConfig& cfg) {
      cfg.retention_ms = -1;
      cfg.retention_bytes = c.retention;
    });
    REQUIRE(f.log->delete_old_segments());
    REQUIRE(f.log->segment_base_offsets() == c.left);
    REQUIRE(f.log->log_start_offset() == c.left.front());
  }
}

TEST_CASE("cleanup.policy=compact ignores retention but honours the log start offset", "[storage]") {
  Fixture f({1, 2, 3});
  f.set([](LogConfig& c) {
    c.cleanup_delete = false;
    c.cleanup_compact = true;
    c.retention_ms = 0;
    c.retention_bytes = 0;
  });
  REQUIRE(f.log->delete_old_segments().value() == 0);
  REQUIRE(f.log->delete_records(7).value() == 7);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{6, 12});
}

TEST_CASE("delete_records advances the log start offset and drops segments wholly below it", "[storage]") {
  Fixture f({1, 2, 3, 4});
  REQUIRE(f.log->delete_records(3).value() == 3);  // mid first segment: nothing deleted
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 6, 12, 18});
  REQUIRE(f.log->read(2, 100).error() == StorageErrc::offset_out_of_range);
  REQUIRE(f.log->read(3, 1)->records.length > 0);
  REQUIRE(f.log->offset_for_timestamp(Log::kEarliestTimestamp).value()->offset == 3);
  REQUIRE(f.log->delete_records(1).value() == 3);  // never moves back
  REQUIRE(f.log->delete_records(6).value() == 6);  // exactly the next segment's base
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{6, 12, 18});
  REQUIRE(f.log->delete_records(25).error() == StorageErrc::offset_out_of_range);  // past the high watermark
  REQUIRE(f.log->delete_records(-1).value() == 24);  // -1: the high watermark
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{18});
  REQUIRE(f.log->read(24, 100)->records.length == 0);
  REQUIRE(append(*f.log, batch_of(1, 99))->log_start_offset == 24);
  REQUIRE(f.log->leader_epochs() == std::vector<EpochEntry>{{0, 24}});
}

TEST_CASE("deleted segments stay readable by fetches in flight and go after file.delete.delay.ms", "[storage]") {
  Fixture f({1, 2, 3});
  f.set([](LogConfig& c) { c.file_delete_delay_ms = 5000; });
  auto in_flight = f.log->read(0, 1 << 20);
  REQUIRE(in_flight);
  Bytes before = read_region(in_flight->records);
  REQUIRE(f.log->delete_records(6).value() == 6);
  fs::path dir = f.tmp.path / "t-0";
  REQUIRE_FALSE(fs::exists(dir / (Segment::file_stem(0) + ".log")));
  REQUIRE(fs::exists(dir / (Segment::file_stem(0) + ".log.deleted")));
  REQUIRE(fs::exists(dir / (Segment::file_stem(0) + ".index.deleted")));
  REQUIRE(read_region(in_flight->records) == before);
  f.clock.advance(4999);
  REQUIRE(f.log->delete_old_segments());
  REQUIRE(fs::exists(dir / (Segment::file_stem(0) + ".log.deleted")));
  f.clock.advance(1);
  REQUIRE(f.log->delete_old_segments());
  REQUIRE_FALSE(fs::exists(dir / (Segment::file_stem(0) + ".log.deleted")));
  REQUIRE(read_region(in_flight->records) == before);  // the fd outlives the name
}
