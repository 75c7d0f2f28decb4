#include <catch2/catch.hpp>

#include <random>
#include <thread>

#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

TEST_CASE("readers, retention and flushes run alongside the appending strand", "[storage]") {
  TempDir tmp;
  LogConfig c;
  c.segment_bytes = 4096;
  c.retention_bytes = 16384;
  c.retention_ms = -1;
  c.file_delete_delay_ms = 0;
  auto opened = Log::open(tmp.path / "t-0", c, LogOptions{});
  REQUIRE(opened);
  Log& log = **opened;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::thread appender([&] {
    for (int i = 0; i < 1500; ++i) {
      Bytes b = batch_of(1 + i % 2, static_cast<uint64_t>(i), 60);
      if (!append(log, b, 0)) ++bad;
    }
    done = true;
  });
  std::thread reader([&] {
    std::mt19937 rng(1);
    while (!done) {
      int64_t start = log.log_start_offset(), end = log.log_end_offset();
      if (end <= start) continue;
      int64_t o = start + static_cast<int64_t>(rng() % static_cast<uint64_t>(end - start));
      auto r = log.read(o, 1000, end);  // what was appended, committed or not
      if (!r) {
        if (r.error() != StorageErrc::offset_out_of_range) ++bad;  // retention may overtake us
        continue;
      }
      auto batches = parse_batches(read_region(r->records));
      if (batches.empty() || batches[0].header.base_offset > o || batches[0].header.last_offset() < o) ++bad;
      for (const auto& b : batches)
        if (!b.crc_ok) ++bad;
    }
  });
  std::thread housekeeping([&] {
    while (!done) {
      if (!log.delete_old_segments()) ++bad;
      if (log.flush_if_due(Clock::system().wall_ms())) ++bad;
      if (log.sync()) ++bad;
    }
  });
  appender.join();
  reader.join();
  housekeeping.join();
  REQUIRE(bad == 0);
  REQUIRE(log.delete_old_segments());
  REQUIRE(log.size_bytes() <= 16384 + 4096);
  auto all = read_all(log);
  REQUIRE_FALSE(all.empty());
  REQUIRE(all.back().tag == 1499);
}
