// The log's .txnindex files: appends by the partition, read_committed
// lookups across segments, the files following their segments (retention,
// DeleteRecords, truncation, compaction) and what an open trusts.
#include <catch2/catch.hpp>

#include <string>

#include "protocol/records/batch_builder.h"
#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;
namespace rec = runnel::protocol::records;

namespace {

using Txns = std::vector<AbortedTxn>;

// A batch of one record with key `key` (the cleaner keeps the latest per key).
Bytes keyed(const std::string& key) {
  rec::Record r;
  r.key = runnel::protocol::ByteView(reinterpret_cast<const uint8_t*>(key.data()), key.size());
  r.value = r.key;
  rec::BatchSpec spec;
  spec.base_timestamp = 1'700'000'000'000;
  std::vector<rec::Record> records{r};
  return rec::build_batch(spec, records);
}

struct Fixture {
  TempDir tmp;
  FakeClock clock;
  LogConfig config;
  std::unique_ptr<Log> log;
  int keys = 0;

  explicit Fixture(LogConfig c = {}) : config(c) { open(); }
  fs::path dir() const { return tmp.path / "t-0"; }
  fs::path txn_file(int64_t base, const char* suffix = "") const {
    return dir() / (Segment::file_stem(base) + ".txnindex" + suffix);
  }
  void open(bool clean = true, int64_t recovery_point = 0) {
    log.reset();
    LogOptions o = options_with(clock);
    o.clean_shutdown = clean;
    o.recovery_point = recovery_point;
    auto l = Log::open(dir(), config, o);
    REQUIRE(l);
    log = std::move(*l);
  }
  void crash_and_open(int64_t recovery_point) {
    log->abandon_for_testing();
    open(/*clean=*/false, recovery_point);
  }
  // `n` records, each batch with a key of its own.
  void data(int n) {
    for (int i = 0; i < n; ++i) REQUIRE(append(*log, keyed("k" + std::to_string(keys++))));
  }
  // A marker batch, then its entry: as the partition appends an ABORT.
  AbortedTxn abort(int64_t producer_id, int64_t first_offset, int64_t last_stable_offset) {
    data(1);
    AbortedTxn t{producer_id, first_offset, log->log_end_offset() - 1, last_stable_offset};
    REQUIRE_FALSE(log->append_aborted_txn(t));
    return t;
  }
  // A clean close and open keeps every entry and trusts every index.
  void reopen_cleanly_expect(const Txns& want) {
    REQUIRE_FALSE(log->close());
    open();
    REQUIRE(log->txn_index_rebuild_from() == -1);
    REQUIRE(collect(0, 200) == want);
  }
  Txns collect(int64_t start, int64_t upper) {
    auto r = log->collect_aborted_txns(start, upper);
    REQUIRE(r);
    return *r;
  }
};

// seg 0: 0-4 data, 5 A's marker, 6-7 data; seg 8: 8-12 data, 13 B's marker,
// 14-15 data; active seg 16: 16-18 data, 19 C's marker.
struct Standard : Fixture {
  AbortedTxn a, b, c;
  explicit Standard(LogConfig cfg = {}) : Fixture(cfg) {
    data(5);
    a = abort(1, 0, 0);
    data(2);
    REQUIRE_FALSE(log->roll());
    data(5);
    b = abort(2, 6, 6);
    data(2);
    REQUIRE_FALSE(log->roll());
    data(3);
    // C began at offset 2, before B's abort, though B's last stable offset
    // says otherwise: so a search that goes on past a complete segment shows.
    c = abort(3, 2, 16);
    REQUIRE(log->segment_base_offsets() == std::vector<int64_t>{0, 8, 16});
  }
};

}  // namespace

TEST_CASE("aborted txns go to the .txnindex of their marker's segment which the first one creates",
          "[storage][txnindex]") {
  Fixture f;
  f.data(3);
  REQUIRE_FALSE(fs::exists(f.txn_file(0)));
  AbortedTxn a = f.abort(7, 1, 1);  // marker 3
  REQUIRE(fs::file_size(f.txn_file(0)) == 34);
  f.data(2);
  REQUIRE_FALSE(f.log->roll());
  f.data(2);
  REQUIRE_FALSE(fs::exists(f.txn_file(6)));
  // A follower append may roll past a marker: its entry goes where the marker is.
  AbortedTxn late{8, 2, 5, 1};
  REQUIRE_FALSE(f.log->append_aborted_txn(late));
  REQUIRE(fs::file_size(f.txn_file(0)) == 68);
  REQUIRE_FALSE(fs::exists(f.txn_file(6)));
  REQUIRE(f.collect(0, 100) == Txns{a, late});

  REQUIRE(f.log->append_aborted_txn({9, 0, 4, 0}) == StorageErrc::invalid_argument);
  REQUIRE(fs::file_size(f.txn_file(0)) == 68);
  REQUIRE(f.log->append_aborted_txn({9, 0, 8, 0}) == StorageErrc::offset_out_of_range);
  REQUIRE(f.log->append_aborted_txn({9, 0, -1, 0}) == StorageErrc::offset_out_of_range);
  // Neither fails the log.
  f.data(1);
  REQUIRE_FALSE(f.log->sync());
  REQUIRE(f.log->txn_index_rebuild_from() == -1);
}

TEST_CASE("collect_aborted_txns searches from the fetch offset's segment and stops at a complete one",
          "[storage][txnindex]") {
  Standard f;
  REQUIRE(f.collect(0, 20) == Txns{f.a, f.b, f.c});
  REQUIRE(f.collect(6, 8) == Txns{f.b, f.c});  // A ends before 6; C's last stable offset completes it
  REQUIRE(f.collect(14, 20) == Txns{f.c});  // from seg 8, B ends before 14
  // B's last stable offset 6 reaches the upper bound 6: seg 16 is not searched, so C is not returned.
  REQUIRE(f.collect(0, 6) == Txns{f.a});
  REQUIRE(f.collect(0, 7) == Txns{f.a, f.b, f.c});
  REQUIRE(f.collect(20, 30).empty());
  // Below the log start the search starts at the first segment.
  REQUIRE(f.log->delete_records(8).value() == 8);
  REQUIRE(f.collect(0, 20) == Txns{f.b, f.c});
}

TEST_CASE("truncation drops the txnindex entries at or after the offset within and across segments",
          "[storage][txnindex]") {
  Standard f;
  SECTION("within the active segment") {
    REQUIRE_FALSE(f.log->truncate_to(19));
    REQUIRE(f.collect(0, 100) == Txns{f.a, f.b});
    REQUIRE(fs::file_size(f.txn_file(16)) == 0);
    AbortedTxn d = f.abort(4, 19, 19);
    REQUIRE(f.collect(0, 100) == Txns{f.a, f.b, d});
  }
  SECTION("across segments") {
    REQUIRE_FALSE(f.log->truncate_to(12));
    REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 8});
    REQUIRE(f.collect(0, 100) == Txns{f.a});
    REQUIRE_FALSE(fs::exists(f.txn_file(16)));
    REQUIRE(fs::exists(f.txn_file(16, ".deleted")));
    REQUIRE(fs::file_size(f.txn_file(8)) == 0);
    AbortedTxn d = f.abort(4, 12, 12);  // the order check follows the truncation
    REQUIRE(f.collect(0, 100) == Txns{f.a, d});
  }
  SECTION("below the first segment") {
    REQUIRE_FALSE(f.log->truncate_fully_and_start_at(100));
    REQUIRE(f.collect(0, 200).empty());
    for (int64_t base : {0, 8, 16}) {
      REQUIRE_FALSE(fs::exists(f.txn_file(base)));
      REQUIRE(fs::exists(f.txn_file(base, ".deleted")));
    }
  }
  Txns before = f.collect(0, 200);
  f.reopen_cleanly_expect(before);
}

TEST_CASE("retention and DeleteRecords take a segment's txnindex with it after file.delete.delay.ms",
          "[storage][txnindex]") {
  LogConfig c;
  c.file_delete_delay_ms = 5000;
  c.retention_ms = 1000;
  Standard f(c);
  SECTION("DeleteRecords") { REQUIRE(f.log->delete_records(16).value() == 16); }
  SECTION("retention.ms") {
    f.clock.advance(2000);
    REQUIRE(f.log->delete_old_segments().value() == 2);
  }
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{16});
  for (int64_t base : {0, 8}) {
    REQUIRE_FALSE(fs::exists(f.txn_file(base)));
    REQUIRE(fs::exists(f.txn_file(base, ".deleted")));
  }
  REQUIRE(f.collect(0, 100) == Txns{f.c});
  f.clock.advance(5000);
  REQUIRE(f.log->delete_old_segments());
  for (int64_t base : {0, 8}) REQUIRE_FALSE(fs::exists(f.txn_file(base, ".deleted")));
  REQUIRE(fs::exists(f.txn_file(16)));
}

TEST_CASE("compaction keeps the txnindex entries of the segments it replaces", "[storage][txnindex]") {
  LogConfig c;
  c.cleanup_compact = true;
  c.cleanup_delete = false;
  c.file_delete_delay_ms = 0;
  Standard f(c);
  REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true)->cleaned);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 16});
  REQUIRE(f.collect(0, 100) == Txns{f.a, f.b, f.c});
  REQUIRE(fs::file_size(f.txn_file(0)) == 2 * 34);
  REQUIRE_FALSE(fs::exists(f.txn_file(8)));
  f.reopen_cleanly_expect({f.a, f.b, f.c});
}

TEST_CASE("a compaction swap a crash interrupted keeps the txnindex entries", "[storage][txnindex]") {
  using Stop = CleanerOptions::StopAfter;
  auto stop = GENERATE(Stop::cleaned_written, Stop::swap_renamed, Stop::old_deleted);
  LogConfig c;
  c.cleanup_compact = true;
  c.cleanup_delete = false;
  c.file_delete_delay_ms = 0;
  Standard f(c);
  CleanerOptions o;
  o.stop_after = stop;
  REQUIRE(f.log->clean(f.clock.now(), o, /*force=*/true));
  f.crash_and_open(/*recovery_point=*/16);
  REQUIRE(f.log->txn_index_rebuild_from() == 16);
  for (const auto& e : fs::directory_iterator(f.dir())) {
    std::string name = e.path().filename().string();
    CAPTURE(name);
    REQUIRE_FALSE((name.ends_with(".swap") || name.ends_with(".cleaned") || name.ends_with(".deleted")));
  }
  if (stop == Stop::cleaned_written) {
    REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 8, 16});
    REQUIRE(fs::file_size(f.txn_file(0)) == 34);
    REQUIRE(fs::file_size(f.txn_file(8)) == 34);
  } else {
    REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 16});
    REQUIRE(fs::file_size(f.txn_file(0)) == 2 * 34);
  }
  // Seg 16 was recovered: the partition's replay puts C back.
  REQUIRE(f.collect(0, 100) == Txns{f.a, f.b});
  REQUIRE_FALSE(f.log->append_aborted_txn_during_rebuild(f.c));
  REQUIRE(f.collect(0, 100) == Txns{f.a, f.b, f.c});
}

TEST_CASE("a txnindex failing its sanity check is reset and reported for rebuild with every later one",
          "[storage][txnindex]") {
  Standard f;
  REQUIRE_FALSE(f.log->close());
  Bytes torn = file_bytes(f.txn_file(8));
  torn.push_back(0);  // 35 bytes: not whole entries
  write_bytes(f.txn_file(8), torn);
  f.open();
  REQUIRE(f.log->txn_index_rebuild_from() == 8);
  REQUIRE(fs::file_size(f.txn_file(0)) == 34);
  REQUIRE_FALSE(fs::exists(f.txn_file(8)));
  REQUIRE_FALSE(fs::exists(f.txn_file(16)));
  REQUIRE(f.collect(0, 100) == Txns{f.a});
  // The partition replays the log: A's segment is trusted, so A is skipped.
  for (const auto& t : {f.a, f.b, f.c}) REQUIRE_FALSE(f.log->append_aborted_txn_during_rebuild(t));
  REQUIRE(f.collect(0, 100) == Txns{f.a, f.b, f.c});
  REQUIRE(fs::file_size(f.txn_file(8)) == 34);
  f.reopen_cleanly_expect({f.a, f.b, f.c});
}

TEST_CASE("an unclean open reports the segments it recovered for a txnindex rebuild", "[storage][txnindex]") {
  Standard f;
  REQUIRE_FALSE(f.log->sync());
  SECTION("from the recovery point's segment") {
    f.crash_and_open(/*recovery_point=*/10);
    REQUIRE(f.log->txn_index_rebuild_from() == 8);
    REQUIRE(fs::file_size(f.txn_file(0)) == 34);
    REQUIRE_FALSE(fs::exists(f.txn_file(8)));
    REQUIRE_FALSE(fs::exists(f.txn_file(16)));
    REQUIRE(f.collect(0, 100) == Txns{f.a});
  }
  SECTION("from the start") {
    f.crash_and_open(/*recovery_point=*/0);
    REQUIRE(f.log->txn_index_rebuild_from() == 0);
    REQUIRE(f.collect(0, 100).empty());
  }
  SECTION("a clean open trusts every index") {
    f.reopen_cleanly_expect({f.a, f.b, f.c});
  }
}

TEST_CASE("an open removes a txnindex whose segment is gone", "[storage][txnindex]") {
  Standard f;
  REQUIRE_FALSE(f.log->close());
  write_bytes(f.txn_file(99), file_bytes(f.txn_file(8)));
  f.open();
  REQUIRE_FALSE(fs::exists(f.txn_file(99)));
  REQUIRE(f.log->txn_index_rebuild_from() == -1);
  REQUIRE(f.collect(0, 100) == Txns{f.a, f.b, f.c});
}
