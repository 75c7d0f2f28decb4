// Replicas' .index and .timeindex files are byte-identical however each got
// its batches: a follower that truncated and fetched again, one that
// restarted (cleanly or not), a leader that restarted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

constexpr int kBatches = 120;

LogConfig replica_config() {
  LogConfig c;
  c.segment_bytes = 8192;
  c.index_interval_bytes = 700;
  c.segment_index_bytes = 4096;  // keeps the active segment's preallocated files small to compare
  return c;
}

std::unique_ptr<Log> open_log(const fs::path& dir, const FakeClock& clock, bool clean = true,
                              int64_t recovery_point = 0) {
  LogOptions o;
  o.clock = clock.clock();
  o.clean_shutdown = clean;
  o.recovery_point = recovery_point;
  auto log = Log::open(dir, replica_config(), std::move(o));
  REQUIRE(log);
  return std::move(*log);
}

// Batch i: sizes and record counts vary so that index entries fall on
// batches of every shape; timestamps mostly rise but sometimes step back,
// so the time index's largest-so-far rule matters.
Bytes replica_batch(int i) {
  BatchSpec s;
  s.records = 1 + i % 4;
  s.value_size = 40 + static_cast<size_t>(i * 37 % 150);
  s.first_timestamp = 1'700'000'000'000 + i * 10 - (i % 7 == 3 ? 45 : 0);
  s.timestamp_step = 3;
  s.tag = static_cast<uint64_t>(i);
  return make_batch(s);
}

// Appends batches [from, to) as a leader, one an append: Produce v3+ holds
// exactly one batch a partition.
void lead(Log& log, int from, int to) {
  for (int i = from; i < to; ++i) REQUIRE(append(log, replica_batch(i), 1));
}

// Fetches from the leader, at most `max_bytes` a fetch as a replica fetcher
// does, until `follower` holds `until` (or the leader's end).
void fetch_until(Log& leader, Log& follower, int64_t until, int64_t max_bytes = 1500) {
  until = std::min(until, leader.log_end_offset());
  for (int fetches = 0; fetches < 10'000 && follower.log_end_offset() < until; ++fetches) {
    auto r = leader.read(follower.log_end_offset(), max_bytes, leader.log_end_offset());
    REQUIRE(r);
    Bytes batches = read_region(r->records);
    REQUIRE_FALSE(batches.empty());
    REQUIRE(follower.append_as_follower(batches));
  }
  REQUIRE(follower.log_end_offset() >= until);
}

// "" if equal, else where they part (the bytes themselves are too many to print).
std::string difference(const Bytes& a, const Bytes& b) {
  if (a == b) return "";
  auto common = static_cast<std::ptrdiff_t>(std::min(a.size(), b.size()));
  auto at = std::mismatch(a.begin(), a.begin() + common, b.begin()).first - a.begin();
  return std::to_string(a.size()) + " and " + std::to_string(b.size()) + " bytes, first difference at byte " +
         std::to_string(at);
}

// Every segment file of `dirs` (<replica>/t-0), byte for byte against the first one's.
void require_identical_files(const std::vector<fs::path>& dirs, const std::vector<int64_t>& bases) {
  for (int64_t base : bases) {
    for (const char* ext : {".log", ".index", ".timeindex"}) {
      auto name = Segment::file_stem(base) + ext;
      Bytes reference = file_bytes(dirs.front() / name);
      if (std::string(ext) == ".log") REQUIRE_FALSE(reference.empty());
      for (size_t i = 1; i < dirs.size(); ++i) {
        INFO(dirs[i].parent_path().filename().string() << " " << name);
        CHECK(difference(reference, file_bytes(dirs[i] / name)) == "");
      }
    }
  }
}

// An offset inside a batch, in the middle of the log's `from_end`-th
// segment from its end, found through fetches as a replica sees them.
int64_t offset_inside_segment(Log& log, size_t from_end) {
  auto bases = log.segment_base_offsets();
  REQUIRE(bases.size() > from_end);
  int64_t base = bases[bases.size() - 1 - from_end];
  auto r = log.read(base, 1 << 20, log.log_end_offset());
  REQUIRE(r);
  auto batches = parse_batches(read_region(r->records));
  REQUIRE(batches.size() >= 4);
  const auto& middle = batches[batches.size() / 2].header;
  REQUIRE(middle.last_offset() > middle.base_offset);
  return middle.base_offset + 1;
}

}  // namespace

TEST_CASE("followers that truncated or restarted keep index files byte-identical to the leader's", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  auto leader = open_log(tmp.path / "leader" / "t-0", clock);
  lead(*leader, 0, kBatches);
  const int64_t end = leader->log_end_offset();
  REQUIRE(leader->segment_count() >= 5);

  std::vector<fs::path> dirs{tmp.path / "leader" / "t-0"};
  std::vector<std::unique_ptr<Log>> logs;
  auto follower = [&](const char* name) -> Log& {
    dirs.push_back(tmp.path / name / "t-0");
    logs.push_back(open_log(dirs.back(), clock));
    return *logs.back();
  };

  // Never truncated nor restarted.
  fetch_until(*leader, follower("steady"), end);

  // Truncated inside its active segment, then fetched again.
  Log& active_cut = follower("active-cut");
  fetch_until(*leader, active_cut, end * 3 / 5);
  int64_t cut = offset_inside_segment(active_cut, 0);
  REQUIRE_FALSE(active_cut.truncate_to(cut));
  REQUIRE(active_cut.log_end_offset() < cut);
  fetch_until(*leader, active_cut, end);

  // Truncated back into a segment it had rolled (its final time index
  // entry included), then fetched again.
  Log& rolled_cut = follower("rolled-cut");
  fetch_until(*leader, rolled_cut, end * 4 / 5);
  REQUIRE_FALSE(rolled_cut.truncate_to(offset_inside_segment(rolled_cut, 2)));
  fetch_until(*leader, rolled_cut, end);

  // Closed cleanly mid-way and reopened.
  {
    Log& restarted = follower("clean-restart");
    fetch_until(*leader, restarted, end / 2);
    REQUIRE_FALSE(restarted.close());
    logs.back() = open_log(dirs.back(), clock);
    fetch_until(*leader, *logs.back(), end);
  }

  // Killed mid-way (files left as they were) and recovered.
  {
    Log& crashed = follower("crash-restart");
    fetch_until(*leader, crashed, end / 2 + 25);
    REQUIRE_FALSE(crashed.sync());
    int64_t recovery_point = crashed.recovery_point();
    crashed.abandon_for_testing();
    logs.back() = open_log(dirs.back(), clock, /*clean=*/false, recovery_point);
    fetch_until(*leader, *logs.back(), end);
  }

  for (auto& log : logs) REQUIRE(log->segment_base_offsets() == leader->segment_base_offsets());
  // Open, the active segments' preallocated files compare as they are...
  require_identical_files(dirs, leader->segment_base_offsets());
  // ...and closed, trimmed with their final time index entries.
  REQUIRE_FALSE(leader->close());
  for (auto& log : logs) REQUIRE_FALSE(log->close());
  require_identical_files(dirs, leader->segment_base_offsets());
}

TEST_CASE("a leader that restarted keeps index files byte-identical to its follower's", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  std::vector<fs::path> dirs{tmp.path / "leader" / "t-0", tmp.path / "follower" / "t-0"};
  auto leader = open_log(dirs[0], clock);
  auto follower = open_log(dirs[1], clock);
  // Every 17 batches it restarts, closed cleanly or killed in turn, and
  // leads on.
  for (int from = 0, restarts = 0; from < kBatches; from += 17, ++restarts) {
    if (restarts % 2 == 0) {
      REQUIRE_FALSE(leader->close());
      leader = open_log(dirs[0], clock);
    } else {
      // Recovery re-reads the segments from its recovery point on.
      REQUIRE_FALSE(leader->sync());
      int64_t recovery_point = leader->recovery_point();
      leader->abandon_for_testing();
      leader = open_log(dirs[0], clock, /*clean=*/false, recovery_point);
    }
    lead(*leader, from, std::min(from + 17, kBatches));
    fetch_until(*leader, *follower, leader->log_end_offset());
  }

  REQUIRE(leader->segment_count() >= 5);
  REQUIRE(follower->segment_base_offsets() == leader->segment_base_offsets());
  require_identical_files(dirs, leader->segment_base_offsets());
  REQUIRE_FALSE(leader->close());
  REQUIRE_FALSE(follower->close());
  require_identical_files(dirs, leader->segment_base_offsets());
}
