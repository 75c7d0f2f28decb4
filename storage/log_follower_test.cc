// A follower's log copies its leader's batches byte for byte.
#include <catch2/catch.hpp>

#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

std::unique_ptr<Log> open_log(const fs::path& dir, const FakeClock& clock) {
  LogConfig c;
  c.segment_bytes = 4096;
  c.index_interval_bytes = 512;
  auto log = Log::open(dir, c, options_with(clock));
  REQUIRE(log);
  return std::move(*log);
}

// Every byte the leader's log holds from `from`, as a fetch would return it.
Bytes fetch_from(Log& leader, int64_t from) {
  auto r = leader.read(from, 1 << 30, leader.log_end_offset());
  REQUIRE(r);
  return read_region(r->records);
}

}  // namespace

TEST_CASE("a follower appends the leader's batches as they are: same offsets, epochs, segments and bytes", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  auto leader = open_log(tmp.path / "leader" / "t-0", clock);
  auto follower = open_log(tmp.path / "follower" / "t-0", clock);
  for (int i = 0; i < 40; ++i) {
    int32_t epoch = i < 20 ? 0 : 3;
    REQUIRE(append(*leader, batch_of(1 + i % 4, i, 120), epoch));
  }
  // In two fetches, the second starting where the first ended.
  Bytes first = fetch_from(*leader, 0);
  auto cut = parse_batches(first);
  size_t half = 0;
  for (size_t i = 0; i < cut.size() / 2; ++i) half += cut[i].header.total_size();
  REQUIRE(follower->append_as_follower(std::span<const uint8_t>(first.data(), half)));
  // Then as a fetcher does: from its log end until caught up (a read
  // stops at a segment's end).
  while (follower->log_end_offset() < leader->log_end_offset()) {
    Bytes more = fetch_from(*leader, follower->log_end_offset());
    REQUIRE_FALSE(more.empty());
    REQUIRE(follower->append_as_follower(more));
  }
  CHECK(follower->log_end_offset() == leader->log_end_offset());
  CHECK(follower->leader_epochs() == leader->leader_epochs());
  REQUIRE(follower->segment_base_offsets() == leader->segment_base_offsets());
  REQUIRE_FALSE(leader->close());
  REQUIRE_FALSE(follower->close());
  for (int64_t base : leader->segment_base_offsets()) {
    for (const char* ext : {".log", ".index", ".timeindex"}) {
      auto name = Segment::file_stem(base) + ext;
      CHECK(file_bytes(tmp.path / "leader" / "t-0" / name) == file_bytes(tmp.path / "follower" / "t-0" / name));
    }
  }
}

TEST_CASE("a follower refuses batches below its log end, out of order, or with a bad CRC", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  auto leader = open_log(tmp.path / "leader" / "t-0", clock);
  auto follower = open_log(tmp.path / "follower" / "t-0", clock);
  for (int i = 0; i < 3; ++i) REQUIRE(append(*leader, batch_of(2, i), 1));
  Bytes all = fetch_from(*leader, 0);
  REQUIRE(follower->append_as_follower(all));
  CHECK(follower->append_as_follower(all).error() == StorageErrc::invalid_record);  // below the log end
  // A batch from further on is fine (a compacted leader skips offsets)...
  Bytes later = batch_of(1, 9);
  records::set_base_offset(later.data(), 100);
  REQUIRE(follower->append_as_follower(later));
  CHECK(follower->log_end_offset() == 101);
  // ...but not with its CRC broken, and nothing of it is written.
  Bytes bad = batch_of(1, 10);
  records::set_base_offset(bad.data(), 101);
  bad.back() ^= 0xff;
  CHECK(follower->append_as_follower(bad).error() == StorageErrc::corrupt_record);
  CHECK(follower->log_end_offset() == 101);
}
