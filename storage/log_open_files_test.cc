// Inactive segments open their files when used and close them when idle
// (segment.h, "Open files"): descriptors and maps are counted in
// /proc/self, as an operator would count them.
#include <catch2/catch.hpp>

#include <chrono>
#include <string_view>

#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

std::unique_ptr<Log> open_log(const fs::path& dir, const LogConfig& c, const FakeClock& clock) {
  LogOptions o = options_with(clock);
  o.clean_shutdown = true;
  auto log = Log::open(dir, c, o);
  REQUIRE(log);
  return std::move(*log);
}

// Small segments deleted an hour after their largest timestamp, at once.
LogConfig hour_retention() {
  LogConfig c = small_segment_config();
  c.retention_ms = 3'600'000;
  c.file_delete_delay_ms = 0;
  return c;
}

// Descriptors of this process open on files in `dir`.
int descriptors_in(const fs::path& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc/self/fd", ec)) {
    auto target = fs::read_symlink(e.path(), ec);
    if (!ec && target.parent_path() == dir) ++n;
  }
  return n;
}

// Memory maps of this process of files in `dir` (whose names end in `suffix`).
int maps_in(const fs::path& dir, std::string_view suffix = "") {
  auto maps = read_whole_file("/proc/self/maps");
  REQUIRE(maps);
  int n = 0;
  for (size_t at = maps->find(dir.string()); at != std::string::npos; at = maps->find(dir.string(), at + 1)) {
    std::string_view line(*maps);
    line = line.substr(at, line.find('\n', at) - at);
    if (line.ends_with(suffix)) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("a reopened log opens only its active segment; an old one opens when read and closes when idle",
          "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = fs::canonical(tmp.path) / "t-0";
  {
    auto log = open_log(dir, small_segment_config(), clock);
    for (int i = 0; i < 40; ++i) REQUIRE(append(*log, batch_of(2, i, 80, 1000 + i)));
    REQUIRE_FALSE(log->close());
  }
  auto log = open_log(dir, small_segment_config(), clock);
  size_t segments = log->segment_count();
  REQUIRE(segments >= 5);
  REQUIRE(log->open_segment_count() == 1);
  REQUIRE(descriptors_in(dir) == 1);  // the active .log
  REQUIRE(maps_in(dir) == 2);         // its .index and .timeindex

  auto all = read_all(*log);
  REQUIRE(all.size() == 40);
  REQUIRE(log->open_segment_count() == segments);
  REQUIRE(descriptors_in(dir) == static_cast<int>(segments));
  // A fetch needs the offset index alone: old time indexes stay unmapped,
  // as Kafka's LazyIndex leaves them.
  REQUIRE(maps_in(dir, ".timeindex") == 1);

  // A second chance: used since the last pass, so kept; idle for a whole pass, closed.
  REQUIRE(log->close_idle_segments() == 0);
  REQUIRE(log->close_idle_segments() == static_cast<int>(segments - 1));
  REQUIRE(log->open_segment_count() == 1);
  REQUIRE(descriptors_in(dir) == 1);
  REQUIRE(maps_in(dir) == 2);

  // Closed segments read the same when opened again.
  all = read_all(*log);
  REQUIRE(all.size() == 40);
  for (int i = 0; i < 40; ++i) REQUIRE(all[i].tag == static_cast<uint64_t>(i));
  REQUIRE(log->close_idle_segments() == 0);
  REQUIRE(log->close_idle_segments() == static_cast<int>(segments - 1));

  // ListOffsets by timestamp opens the segment holding the answer, not the
  // ones before it: their largest timestamps are known while closed.
  REQUIRE(log->offset_for_timestamp(1030).value()->offset == 60);
  REQUIRE(log->open_segment_count() == 2);
  REQUIRE(maps_in(dir, ".timeindex") == 2);
  REQUIRE(log->offset_for_timestamp(Log::kMaxTimestamp).value()->offset == 78);  // the first record of ts 1039

  // A read in flight keeps its descriptor after the segment closes.
  auto r = log->read(0, 1 << 20);
  REQUIRE(r);
  REQUIRE(log->open_segment_count() == 3);  // and the first segment, read
  REQUIRE(log->close_idle_segments() == 0);
  REQUIRE(log->close_idle_segments() == 2);
  REQUIRE(parse_batches(read_region(r->records)).front().tag == 0);

  // Closing a log whose old segments are closed leaves the same files.
  REQUIRE_FALSE(log->close());
  log = open_log(dir, small_segment_config(), clock);
  REQUIRE(log->segment_count() == segments);
  REQUIRE(read_all(*log).size() == 40);
}

TEST_CASE("time retention after a restart goes by the records' timestamps, not the files' mtime", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "t-0";
  LogConfig c = hour_retention();
  int64_t two_hours_ago = clock.now() - 7'200'000;
  {
    auto log = open_log(dir, c, clock);
    for (int i = 0; i < 40; ++i) REQUIRE(append(*log, batch_of(2, i, 80, two_hours_ago + i)));
    REQUIRE_FALSE(log->close());
  }
  // The files were written now (by the wall clock, past the fake one): an
  // mtime would keep them, the time indexes say they are two hours old.
  auto log = open_log(dir, c, clock);
  size_t segments = log->segment_count();
  REQUIRE(segments >= 5);
  auto deleted = log->delete_old_segments();
  REQUIRE(deleted);
  REQUIRE(*deleted == static_cast<int>(segments - 1));
  REQUIRE(log->segment_count() == 1);
  REQUIRE(log->open_segment_count() == 1);
}

TEST_CASE("the log manager's retention pass closes the files of segments idle for a whole pass", "[storage]") {
  TempDir tmp;
  auto logs = open_log_manager(tmp.path);
  TopicPartition tp{"t", 0};
  LogConfig c = small_segment_config();
  auto log = logs->get_or_create(tp, c);
  REQUIRE(log);
  // Stamped now: this log manager's retention goes by the wall clock.
  int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch()).count();
  for (int i = 0; i < 40; ++i) REQUIRE(append(**log, batch_of(2, i, 80, now)));
  size_t segments = (*log)->segment_count();
  REQUIRE((*log)->open_segment_count() == segments);  // rolled here, never closed
  REQUIRE(logs->run_retention());
  REQUIRE((*log)->open_segment_count() == segments);  // just written: a second chance
  REQUIRE(logs->run_retention());
  REQUIRE((*log)->open_segment_count() == 1);
  REQUIRE(read_all(**log).size() == 40);
  REQUIRE_FALSE(logs->close());
}

TEST_CASE("a closed segment whose time index reads as zeros is checked, not trusted, before retention uses it",
          "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "t-0";
  LogConfig c = hour_retention();
  {
    auto log = open_log(dir, c, clock);
    for (int i = 0; i < 40; ++i) REQUIRE(append(*log, batch_of(2, i, 80, clock.now() + i)));
    REQUIRE_FALSE(log->close());
  }
  // What a power loss can leave of an index written but never synced.
  fs::path first = dir / (Segment::file_stem(0) + ".timeindex");
  size_t size = fs::file_size(first);
  REQUIRE(size > 0);
  write_bytes(first, Bytes(size, 0));
  auto log = open_log(dir, c, clock);
  size_t segments = log->segment_count();
  // A timestamp of 0 would make the first segment 54 years old: it is rebuilt from the .log instead.
  REQUIRE(*log->delete_old_segments() == 0);
  REQUIRE(log->segment_count() == segments);
  REQUIRE(log->offset_for_timestamp(clock.now()).value()->offset == 0);
  clock.advance(3'600'000 + 100);
  REQUIRE(*log->delete_old_segments() == static_cast<int>(segments - 1));
}
