#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"
#include "storage/log.h"
#include "storage/log_manager.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;
namespace rec = runnel::protocol::records;
using runnel::protocol::ByteView;

namespace {

constexpr int64_t T0 = 1'700'000'000'000;

struct KV {
  std::optional<std::string> key;
  std::optional<std::string> value;  // nullopt: a tombstone
};

ByteView view(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

Bytes kv_batch(const std::vector<KV>& kvs, int64_t ts = T0, rec::Compression c = rec::Compression::none,
               int64_t producer_id = -1, bool control = false) {
  std::vector<rec::Record> records;
  for (size_t i = 0; i < kvs.size(); ++i) {
    rec::Record r;
    r.offset_delta = static_cast<int32_t>(i);
    r.timestamp_delta = static_cast<int64_t>(i);
    if (kvs[i].key) r.key = view(*kvs[i].key);
    if (kvs[i].value) r.value = view(*kvs[i].value);
    records.push_back(r);
  }
  rec::BatchSpec spec;
  spec.compression = c;
  spec.base_timestamp = ts;
  spec.control = control;
  if (producer_id >= 0) {
    spec.producer_id = producer_id;
    spec.producer_epoch = 3;
    spec.base_sequence = 10;
  }
  return rec::build_batch(spec, records);
}

struct Rec {
  int64_t offset;
  std::string key;
  std::optional<std::string> value;
  int64_t timestamp;
  bool operator==(const Rec&) const = default;
};

std::string str(ByteView v) { return {reinterpret_cast<const char*>(v.data()), v.size()}; }

// Every record the log returns from its start, through Log::read.
std::vector<Rec> dump(Log& log, std::vector<rec::BatchHeader>* headers = nullptr) {
  std::vector<Rec> out;
  int64_t offset = log.log_start_offset();
  while (offset < log.log_end_offset()) {
    auto r = log.read(offset, 100);
    REQUIRE(r);
    if (r->records.length == 0) break;
    Bytes bytes = read_region(r->records);
    rec::BatchIterator it(bytes);
    while (auto b = it.next()) {
      REQUIRE(rec::compute_batch_crc(b->bytes) == b->header.crc);
      if (headers) headers->push_back(b->header);
      rec::BatchRecordReader reader(b->bytes, 1 << 20);
      rec::Record record;
      while (reader.next(record)) {
        int64_t o = b->header.base_offset + record.offset_delta;
        if (o < offset) continue;
        out.push_back({o, record.key ? str(*record.key) : "<null>",
                       record.value ? std::optional<std::string>(str(*record.value)) : std::nullopt,
                       b->header.base_timestamp + record.timestamp_delta});
      }
      REQUIRE(reader.status().ok());
      offset = b->header.last_offset() + 1;
    }
  }
  return out;
}

std::vector<int64_t> offsets(const std::vector<Rec>& recs) {
  std::vector<int64_t> o;
  for (const auto& r : recs) o.push_back(r.offset);
  return o;
}

LogConfig compact_config() {
  LogConfig c;
  c.cleanup_compact = true;
  c.cleanup_delete = false;
  c.file_delete_delay_ms = 0;
  c.delete_retention_ms = 1000;
  return c;
}

struct Fixture {
  TempDir tmp;
  FakeClock clock;
  std::unique_ptr<Log> log;
  explicit Fixture(LogConfig c = compact_config()) { open(c); }
  void open(const LogConfig& c, bool clean = true) {
    LogOptions o = options_with(clock);
    o.clean_shutdown = clean;
    auto l = Log::open(tmp.path / "t-0", c, o);
    REQUIRE(l);
    log = std::move(*l);
  }
  void add(const std::vector<KV>& kvs, int64_t ts = T0, rec::Compression c = rec::Compression::none) {
    REQUIRE(append(*log, kv_batch(kvs, ts, c)));
  }
  void set(const std::function<void(LogConfig&)>& f) {
    LogConfig c = log->config();
    f(c);
    log->set_config(c);
  }
  std::vector<std::string> leftovers() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(tmp.path / "t-0")) {
      std::string n = e.path().filename().string();
      if (n.ends_with(".cleaned") || n.ends_with(".swap") || n.ends_with(".deleted")) out.push_back(n);
    }
    return out;
  }
};

// seg 0: [k1=a k2=b k1=c] (0-2); seg 3: [k3=d] [k2=e] (3, 4); active: [k1=f] (5).
void standard_log(Fixture& f) {
  f.add({{"k1", "a"}, {"k2", "b"}, {"k1", "c"}});
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k3", "d"}});
  f.add({{"k2", "e"}});
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k1", "f"}});
}

const std::vector<Rec> kStandardCompacted = {
    {2, "k1", "c", T0 + 2}, {3, "k3", "d", T0}, {4, "k2", "e", T0}, {5, "k1", "f", T0}};

// Bounds every wait of the mid-pass tests; generous, so only a stalled log reaches it.
constexpr auto kBound = std::chrono::seconds(30);

template <class T>
bool finished(const std::future<T>& f, std::chrono::seconds within = kBound) {
  return f.wait_for(within) == std::future_status::ready;
}

// One cleaning pass on its own thread, held between writing its output and
// the swap until release() (or the bound) lets it go on.
struct PassInProgress {
  std::promise<void> reached_promise, go_promise;
  std::future<void> reached_future = reached_promise.get_future();
  std::shared_future<void> go = go_promise.get_future().share();
  std::atomic<bool> hook_called{false};
  bool released = false;
  std::future<Result<CleanResult>> pass;

  PassInProgress(Log& log, int64_t now) {
    CleanerOptions o;
    o.before_swap = [this] {
      if (!hook_called.exchange(true)) reached_promise.set_value();
      (void)go.wait_for(kBound);
    };
    pass = std::async(std::launch::async, [&log, now, o] { return log.clean(now, o); });
  }
  bool reached() { return finished(reached_future); }
  void release() {
    if (!released) go_promise.set_value();
    released = true;
  }
  ~PassInProgress() {
    release();
    if (pass.valid()) pass.wait();
  }
};

}  // namespace

TEST_CASE("compaction keeps the latest value per key below the active segment, offsets unchanged", "[storage][cleaner]") {
  Fixture f;
  standard_log(f);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 3, 5});
  auto info = f.log->cleanable(f.clock.now());
  REQUIRE(info);
  REQUIRE(info->first_dirty_offset == 0);
  REQUIRE(info->first_uncleanable_offset == 5);
  REQUIRE(info->cleanable_ratio == 1.0);
  REQUIRE(info->due);

  auto r = f.log->clean(f.clock.now());
  REQUIRE(r);
  REQUIRE(r->cleaned);
  REQUIRE(r->records_removed == 2);
  REQUIRE(r->segments_in == 2);
  REQUIRE(r->segments_out == 1);
  REQUIRE(f.log->first_dirty_offset() == 5);
  // k1's value at 5 is in the active segment, which the cleaner never reads: k1=c stays.
  std::vector<rec::BatchHeader> headers;
  REQUIRE(dump(*f.log, &headers) == kStandardCompacted);
  REQUIRE(headers[0].base_offset == 0);
  REQUIRE(headers[0].last_offset_delta == 2);  // the rebuilt batch keeps its offset range
  REQUIRE(headers[0].records_count == 1);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 5});
  REQUIRE(f.log->log_end_offset() == 6);
  REQUIRE(f.leftovers().empty());

  // A fetch of a removed offset starts at the batch that covers it.
  auto read = f.log->read(1, 1000);
  REQUIRE(read);
  REQUIRE(parse_batches(read_region(read->records)).front().header.base_offset == 0);
  read = f.log->read(3, 1000);
  REQUIRE(parse_batches(read_region(read->records)).front().header.base_offset == 3);

  // Nothing is dirty now; reopening (indexes included) reads the same.
  REQUIRE_FALSE(f.log->cleanable(f.clock.now())->due);
  REQUIRE_FALSE(f.log->clean(f.clock.now())->cleaned);
  REQUIRE_FALSE(f.log->close());
  f.open(compact_config(), /*clean=*/false);
  REQUIRE(dump(*f.log) == kStandardCompacted);

  // Rolling makes k1=f cleanable: k1=c goes.
  REQUIRE_FALSE(f.log->roll());
  REQUIRE(f.log->first_dirty_offset() == 0);  // no cleaner checkpoint was passed to open
  f.log->set_first_dirty_offset(5);            // what LogManager restores from it
  REQUIRE(f.log->cleanable(f.clock.now())->cleanable_ratio < 0.5);  // one small dirty batch
  r = f.log->clean(f.clock.now(), {}, /*force=*/true);
  REQUIRE(r->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{3, 4, 5});
}

TEST_CASE("compaction runs only when the dirty ratio exceeds min.cleanable.dirty.ratio", "[storage][cleaner]") {
  Fixture f;
  standard_log(f);
  REQUIRE(f.log->clean(f.clock.now())->cleaned);
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k4", "g"}});
  REQUIRE_FALSE(f.log->roll());
  auto info = *f.log->cleanable(f.clock.now());
  REQUIRE(info.first_dirty_offset == 5);
  REQUIRE(info.first_uncleanable_offset == 7);
  REQUIRE(info.cleanable_ratio > 0.3);
  REQUIRE(info.cleanable_ratio < 0.7);
  f.set([&](LogConfig& c) { c.min_cleanable_dirty_ratio = info.cleanable_ratio; });  // equal: not above
  REQUIRE_FALSE(f.log->cleanable(f.clock.now())->due);
  REQUIRE_FALSE(f.log->clean(f.clock.now())->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{2, 3, 4, 5, 6});
  f.set([&](LogConfig& c) { c.min_cleanable_dirty_ratio = info.cleanable_ratio - 1e-9; });
  REQUIRE(f.log->cleanable(f.clock.now())->due);
  REQUIRE(f.log->clean(f.clock.now())->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{3, 4, 5, 6});
  REQUIRE(f.log->first_dirty_offset() == 7);
}

TEST_CASE("min.compaction.lag.ms keeps segments with recent records dirty", "[storage][cleaner]") {
  LogConfig c = compact_config();
  c.min_compaction_lag_ms = 1000;
  Fixture f(c);
  f.add({{"k1", "a"}, {"k1", "b"}}, 10000);
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k1", "c"}, {"k1", "d"}}, 20000);
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k2", "x"}}, 30000);
  // The second segment's largest timestamp is 20001.
  *f.clock.ms = 21001;  // 20001 is exactly the lag old: not newer than now - lag, so cleanable
  REQUIRE(f.log->cleanable(f.clock.now())->first_uncleanable_offset == 4);
  *f.clock.ms = 21000;  // 20001 > 21000 - 1000: the second segment is too recent
  auto info = *f.log->cleanable(f.clock.now());
  REQUIRE(info.first_uncleanable_offset == 2);
  REQUIRE(f.log->clean(f.clock.now())->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{1, 2, 3, 4});  // only the first segment compacted
  REQUIRE(f.log->first_dirty_offset() == 2);
  *f.clock.ms = 21001;
  REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true)->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{3, 4});
}

TEST_CASE("max.compaction.lag.ms forces a pass whatever the dirty ratio", "[storage][cleaner]") {
  LogConfig c = compact_config();
  c.min_cleanable_dirty_ratio = 1.0;  // the ratio alone never triggers
  c.max_compaction_lag_ms = 5000;
  Fixture f(c);
  f.add({{"k1", "a"}}, 10000);
  f.add({{"k1", "b"}}, 12000);
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k2", "x"}}, 13000);
  *f.clock.ms = 15000;  // the first batch is exactly max.compaction.lag.ms old
  REQUIRE_FALSE(f.log->cleanable(f.clock.now())->due);
  REQUIRE_FALSE(f.log->clean(f.clock.now())->cleaned);
  *f.clock.ms = 15001;
  auto info = *f.log->cleanable(f.clock.now());
  REQUIRE(info.need_compaction_now);
  REQUIRE(info.due);
  REQUIRE(f.log->clean(f.clock.now())->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{1, 2});
}

TEST_CASE("tombstones get a delete horizon and go once delete.retention.ms has passed", "[storage][cleaner]") {
  Fixture f;  // delete.retention.ms = 1000
  f.add({{"k1", "a"}, {"k2", "b"}});
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k1", std::nullopt}, {"k3", "c"}}, T0 + 50);
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k9", "z"}});
  *f.clock.ms = T0 + 100;
  REQUIRE(f.log->clean(f.clock.now())->cleaned);
  std::vector<rec::BatchHeader> headers;
  auto recs = dump(*f.log, &headers);
  REQUIRE(recs == std::vector<Rec>{{1, "k2", "b", T0 + 1},
                                   {2, "k1", std::nullopt, T0 + 50},
                                   {3, "k3", "c", T0 + 51},
                                   {4, "k9", "z", T0}});
  // The tombstone's batch: bit 6 set, the horizon in baseTimestamp, record times kept.
  REQUIRE(headers[1].base_offset == 2);
  REQUIRE((headers[1].attributes & rec::kDeleteHorizonBit) != 0);
  REQUIRE(headers[1].base_timestamp == T0 + 100 + 1000);
  REQUIRE(headers[1].max_timestamp == T0 + 51);
  REQUIRE((headers[0].attributes & rec::kDeleteHorizonBit) == 0);

  // Another pass before the horizon keeps the tombstone; at the horizon it goes.
  *f.clock.ms = T0 + 1099;
  f.log->set_first_dirty_offset(0);
  REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true)->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{1, 2, 3, 4});
  *f.clock.ms = T0 + 1100;
  f.log->set_first_dirty_offset(0);
  REQUIRE(f.log->clean(f.clock.now(), {}, true)->cleaned);
  recs = dump(*f.log);
  REQUIRE(offsets(recs) == std::vector<int64_t>{1, 3, 4});
  REQUIRE(recs[1] == Rec{3, "k3", "c", T0 + 51});
  REQUIRE(f.log->log_end_offset() == 5);
}

TEST_CASE("a rewritten batch keeps its codec and producer fields, keyless records go, control batches stay",
          "[storage][cleaner]") {
  Fixture f;
  REQUIRE(append(*f.log, kv_batch({{"k1", "a"}, {"k2", "b"}, {"k1", "c"}, {std::nullopt, "nokey"}}, T0,
                                  rec::Compression::gzip, 77)));
  REQUIRE(append(*f.log, kv_batch({{std::string("\0\0\0\1", 4), std::string("\0\0\0\0\0\0", 6)}}, T0,
                                  rec::Compression::none, 77, /*control=*/true)));
  REQUIRE(append(*f.log, kv_batch({{"k2", "d"}}, T0)));
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k9", "z"}});
  REQUIRE(f.log->clean(f.clock.now())->cleaned);
  std::vector<rec::BatchHeader> headers;
  auto recs = dump(*f.log, &headers);
  REQUIRE(offsets(recs) == std::vector<int64_t>{2, 4, 5, 6});
  REQUIRE(headers.size() == 4);
  const auto& h = headers[0];
  REQUIRE(h.compression() == rec::Compression::gzip);
  REQUIRE(h.producer_id == 77);
  REQUIRE(h.producer_epoch == 3);
  REQUIRE(h.base_sequence == 10);
  REQUIRE(h.base_offset == 0);
  REQUIRE(h.last_offset_delta == 3);
  REQUIRE(h.records_count == 1);
  REQUIRE(headers[1].is_control());
}

TEST_CASE("compaction writes groups that fit segment.bytes and reads across them", "[storage][cleaner]") {
  Fixture f;
  std::string big(200, 'v');
  for (int s = 0; s < 6; ++s) {
    f.add({{"k" + std::to_string(s), big}, {"same", big}});
    if (s < 5) REQUIRE_FALSE(f.log->roll());
  }
  REQUIRE_FALSE(f.log->roll());
  f.add({{"tail", "t"}});
  int64_t seg = static_cast<int64_t>(f.log->size_bytes() - 100) / 6;
  f.set([&](LogConfig& c) { c.segment_bytes = static_cast<int32_t>(2 * seg + 10); });
  auto r = f.log->clean(f.clock.now());
  REQUIRE(r->cleaned);
  REQUIRE(r->segments_in == 6);
  REQUIRE(r->segments_out == 3);
  REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 4, 8, 12});
  // Each group of two segments became one; "same" keeps only its value at 11.
  REQUIRE(offsets(dump(*f.log, nullptr)) == std::vector<int64_t>{0, 2, 4, 6, 8, 10, 11, 12});
  REQUIRE(f.leftovers().empty());
  REQUIRE_FALSE(f.log->close());
  f.open(compact_config(), false);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{0, 2, 4, 6, 8, 10, 11, 12});
}

TEST_CASE("a crash in the middle of a swap is rolled back or completed on open", "[storage][cleaner]") {
  using Stop = CleanerOptions::StopAfter;
  auto stop = GENERATE(Stop::cleaned_written, Stop::swap_renamed, Stop::old_deleted);
  Fixture f;
  standard_log(f);
  auto before = dump(*f.log);
  CleanerOptions o;
  o.stop_after = stop;
  REQUIRE(f.log->clean(f.clock.now(), o).ok());
  f.log->abandon_for_testing();
  f.log.reset();
  f.open(compact_config(), /*clean=*/false);
  REQUIRE(f.leftovers().empty());
  if (stop == Stop::cleaned_written) {
    REQUIRE(dump(*f.log) == before);
    REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 3, 5});
    REQUIRE(f.log->clean(f.clock.now())->cleaned);  // and a later pass does the work
  } else {
    REQUIRE(f.log->segment_base_offsets() == std::vector<int64_t>{0, 5});
  }
  REQUIRE(dump(*f.log) == kStandardCompacted);
  REQUIRE(f.log->log_end_offset() == 6);
  f.add({{"k5", "new"}});
  REQUIRE(f.log->log_end_offset() == 7);
}

TEST_CASE("the log manager's tick cleans a due log and checkpoints its first dirty offset", "[storage][cleaner]") {
  TempDir tmp;
  FakeClock clock;
  LogManagerOptions o;
  o.log_dirs = {tmp.path};
  o.clock = clock.clock();
  o.default_config = compact_config();
  {
    auto m = LogManager::open(o);
    REQUIRE(m);
    auto log = (*m)->get_or_create(TopicPartition{"c", 0}, compact_config());
    REQUIRE(log);
    for (int i = 0; i < 3; ++i) REQUIRE(append(**log, kv_batch({{"k", std::to_string(i)}})));
    REQUIRE_FALSE((*log)->roll());
    REQUIRE(append(**log, kv_batch({{"j", "x"}})));
    REQUIRE_FALSE((*m)->tick(clock.now()));
    REQUIRE(offsets(dump(**log)) == std::vector<int64_t>{2, 3});
    REQUIRE((*log)->first_dirty_offset() == 3);
    REQUIRE_FALSE((*m)->close());
  }
  auto text = read_whole_file(tmp.path / kCleanerOffsetCheckpointFile);
  REQUIRE(text);
  REQUIRE(*text == "0\n1\nc 0 3\n");
  auto m = LogManager::open(o);
  REQUIRE(m);
  REQUIRE((*m)->get(TopicPartition{"c", 0})->first_dirty_offset() == 3);
}

TEST_CASE("appends and reads on the log complete while a cleaning pass is in progress", "[storage][cleaner]") {
  Fixture f;
  standard_log(f);
  PassInProgress pass(*f.log, f.clock.now());
  REQUIRE(pass.reached());
  auto appended = std::async(std::launch::async, [&] { return append(*f.log, kv_batch({{"k4", "g"}})); });
  REQUIRE(finished(appended));
  auto info = appended.get();
  REQUIRE(info);
  REQUIRE(info->base_offset == 6);
  auto read = std::async(std::launch::async, [&] { return f.log->read(0, 1000); });
  REQUIRE(finished(read));
  auto r = read.get();
  REQUIRE(r);
  REQUIRE(parse_batches(read_region(r->records)).front().header.base_offset == 0);  // not swapped yet
  REQUIRE_FALSE(finished(pass.pass, std::chrono::seconds(0)));  // both finished while the pass was held
  pass.release();
  REQUIRE(finished(pass.pass));
  auto cleaned = pass.pass.get();
  REQUIRE(cleaned);
  REQUIRE(cleaned->cleaned);
  auto expected = kStandardCompacted;
  expected.push_back({6, "k4", "g", T0});
  REQUIRE(dump(*f.log) == expected);
  REQUIRE(f.log->first_dirty_offset() == 5);
  REQUIRE(f.leftovers().empty());
}

TEST_CASE("a DeleteRecords or a truncation during a cleaning pass makes the pass discard its output",
          "[storage][cleaner]") {
  Fixture f;
  standard_log(f);
  PassInProgress pass(*f.log, f.clock.now());
  REQUIRE(pass.reached());
  std::vector<Rec> expected;
  SECTION("DeleteRecords removes the first segment") {
    auto deleted = std::async(std::launch::async, [&] { return f.log->delete_records(3); });
    REQUIRE(finished(deleted));
    auto start = deleted.get();
    REQUIRE(start);
    REQUIRE(*start == 3);
    expected = {{3, "k3", "d", T0}, {4, "k2", "e", T0}, {5, "k1", "f", T0}};
  }
  SECTION("a truncation removes k2's latest value, which the pass's offset map holds") {
    auto truncated = std::async(std::launch::async, [&] { return f.log->truncate_to(4); });
    REQUIRE(finished(truncated));
    REQUIRE_FALSE(truncated.get());
    // Swapping in the output would drop k2=b for a k2=e that no longer exists.
    expected = {{0, "k1", "a", T0}, {1, "k2", "b", T0 + 1}, {2, "k1", "c", T0 + 2}, {3, "k3", "d", T0}};
  }
  pass.release();
  REQUIRE(finished(pass.pass));
  auto result = pass.pass.get();
  REQUIRE(result);
  REQUIRE_FALSE(result->cleaned);
  REQUIRE(dump(*f.log) == expected);
  REQUIRE(f.leftovers().empty());
  // The next pass starts over and cleans what is left.
  REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true));
  REQUIRE(f.leftovers().empty());
  REQUIRE(f.log->log_end_offset() == expected.back().offset + 1);
}

namespace {

// A transactional data batch of `producer_id`, or its marker (COMMIT or ABORT).
Bytes txn_batch(const std::vector<KV>& kvs, int64_t producer_id) {
  std::vector<rec::Record> records;
  for (size_t i = 0; i < kvs.size(); ++i) {
    rec::Record r;
    r.offset_delta = static_cast<int32_t>(i);
    r.key = view(*kvs[i].key);
    r.value = view(*kvs[i].value);
    records.push_back(r);
  }
  rec::BatchSpec spec;
  spec.base_timestamp = T0;
  spec.transactional = true;
  spec.producer_id = producer_id;
  spec.producer_epoch = 0;
  spec.base_sequence = 0;
  return rec::build_batch(spec, records);
}

Bytes txn_marker(int64_t producer_id, bool commit) {
  const std::string key = commit ? std::string("\0\0\0\1", 4) : std::string("\0\0\0\0", 4);
  rec::Record r;
  r.key = view(key);
  static const std::string value("\0\0\0\0\0\0", 6);
  r.value = view(value);
  rec::BatchSpec spec;
  spec.base_timestamp = T0;
  spec.transactional = true;
  spec.control = true;
  spec.producer_id = producer_id;
  spec.producer_epoch = 0;
  spec.base_sequence = -1;
  std::vector<rec::Record> one{r};
  return rec::build_batch(spec, one);
}

}  // namespace

// Kafka's cleaner (CleanedTransactionMetadata): an aborted transaction's
// records never were the log's, so they go and shadow nothing.
TEST_CASE("an aborted transaction's records go and do not shadow older records of their keys", "[storage][cleaner]") {
  Fixture f;
  f.add({{"k1", "a"}});                                                  // 0
  REQUIRE(append(*f.log, txn_batch({{"k1", "aborted"}, {"k2", "x"}}, 5)));  // 1, 2
  REQUIRE(append(*f.log, txn_marker(5, false)));                          // 3
  REQUIRE_FALSE(f.log->append_aborted_txn({5, 1, 3, 1}));
  REQUIRE(append(*f.log, txn_batch({{"k2", "committed"}}, 6)));           // 4
  REQUIRE(append(*f.log, txn_marker(6, true)));                           // 5
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k9", "z"}});                                                   // 6
  auto r = f.log->clean(f.clock.now());
  REQUIRE(r);
  REQUIRE(r->cleaned);
  std::vector<rec::BatchHeader> headers;
  auto recs = dump(*f.log, &headers);
  // k1=a stays (the aborted k1 does not count), both aborted records go,
  // the markers stay with their offsets, the committed k2 stays.
  REQUIRE(offsets(recs) == std::vector<int64_t>{0, 3, 4, 5, 6});
  REQUIRE(recs[0].value == std::optional<std::string>("a"));
  REQUIRE(recs[2].value == std::optional<std::string>("committed"));
  int controls = 0;
  for (const auto& h : headers) controls += h.is_control();
  REQUIRE(controls == 2);
}

TEST_CASE("compaction stops at the first offset of an undecided transaction", "[storage][cleaner]") {
  Fixture f;
  f.add({{"k1", "a"}});                                 // 0
  REQUIRE(append(*f.log, txn_batch({{"k1", "b"}}, 7)));  // 1: open
  f.add({{"k2", "c"}});                                 // 2
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k9", "z"}});  // 3
  f.log->set_first_unstable_offset(1);
  auto info = f.log->cleanable(f.clock.now());
  REQUIRE(info->first_uncleanable_offset == 1);
  (void)f.log->clean(f.clock.now(), {}, /*force=*/true);
  // The open transaction's k1=b may yet be aborted: k1=a stays.
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{0, 1, 2, 3});
  // Decided (and replicated): the cleaner may go past it.
  f.log->set_first_unstable_offset(-1);
  REQUIRE(append(*f.log, txn_marker(7, true)));  // 4
  REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true)->cleaned);
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{1, 2, 3, 4});
}

namespace {

std::vector<rec::BatchHeader> controls_of(Log& log) {
  std::vector<rec::BatchHeader> headers, controls;
  (void)dump(log, &headers);
  for (const auto& h : headers)
    if (h.is_control()) controls.push_back(h);
  return controls;
}

}  // namespace

// Kafka's cleaner lets a marker go once no batch of its transaction is left
// (CleanedTransactionMetadata), and only after a delete horizon of
// delete.retention.ms set by the pass that first found it so, as for tombstones.
TEST_CASE("a marker goes once its transaction's batches are gone and its delete horizon has passed",
          "[storage][cleaner]") {
  Fixture f;  // delete.retention.ms = 1000
  REQUIRE(append(*f.log, txn_batch({{"k1", "aborted"}}, 5)));  // 0
  REQUIRE(append(*f.log, txn_marker(5, false)));              // 1
  REQUIRE_FALSE(f.log->append_aborted_txn({5, 0, 1, 0}));
  REQUIRE(append(*f.log, txn_batch({{"k2", "old"}}, 6)));     // 2
  REQUIRE(append(*f.log, txn_marker(6, true)));               // 3
  REQUIRE(append(*f.log, txn_batch({{"k3", "kept"}}, 7)));    // 4
  REQUIRE(append(*f.log, txn_marker(7, true)));               // 5
  f.add({{"k2", "new"}});                                     // 6: supersedes k2=old
  f.add({{"k7", "end"}});                                     // 7: ends the group
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k9", "z"}});  // 8
  int passes = 0;
  auto pass = [&] {
    REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true));
    // More dirty bytes (a new key), so that the next forced pass has a range to clean.
    f.add({{"p" + std::to_string(passes++), "x"}});
    REQUIRE_FALSE(f.log->roll());
  };

  // 1: the aborted record and k2=old go; every marker stays as it was, each
  // transaction's batch having been read before it.
  pass();
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{1, 3, 4, 5, 6, 7, 8, 9});
  auto controls = controls_of(*f.log);
  REQUIRE(controls.size() == 3);
  for (const auto& h : controls) REQUIRE_FALSE(h.attributes & rec::kDeleteHorizonBit);
  REQUIRE(f.log->collect_aborted_txns(0, f.log->log_end_offset())->size() == 1);

  // 2: producers 5 and 6 have no batch left: their markers get a horizon;
  // producer 7's k3 stays, and its marker with it.
  f.clock.advance(10);
  const int64_t horizon = f.clock.now() + 1000;
  pass();
  controls = controls_of(*f.log);
  REQUIRE(controls.size() == 3);
  REQUIRE(controls[0].base_offset == 1);
  REQUIRE(controls[0].attributes & rec::kDeleteHorizonBit);
  REQUIRE(controls[0].base_timestamp == horizon);
  REQUIRE(controls[1].attributes & rec::kDeleteHorizonBit);
  REQUIRE_FALSE(controls[2].attributes & rec::kDeleteHorizonBit);
  REQUIRE(f.log->collect_aborted_txns(0, f.log->log_end_offset())->size() == 1);

  // 3: before the horizon nothing changes.
  pass();
  REQUIRE(controls_of(*f.log).size() == 3);

  // 4: after it both markers go, and the ABORT's .txnindex entry with them;
  // every other offset is as it was.
  f.clock.advance(1000);
  pass();
  controls = controls_of(*f.log);
  REQUIRE(controls.size() == 1);
  REQUIRE(controls[0].base_offset == 5);
  REQUIRE(f.log->collect_aborted_txns(0, f.log->log_end_offset())->empty());
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{4, 5, 6, 7, 8, 9, 10, 11, 12});
  REQUIRE(f.leftovers().empty());
}

TEST_CASE("a marker that would end its group's output stays", "[storage][cleaner]") {
  Fixture f;
  f.set([](LogConfig& c) { c.segment_bytes = 4096; });
  f.add({{"k1", "a"}});                                   // 0
  REQUIRE(append(*f.log, txn_batch({{"k1", "b"}}, 5)));   // 1
  f.add({{"k1", "c"}});                                   // 2: supersedes k1=b
  REQUIRE(append(*f.log, txn_marker(5, true)));           // 3: the segment's last batch
  REQUIRE_FALSE(f.log->roll());
  // Too big to share a group with the marker's segment.
  f.add({{"big", std::string(3900, 'x')}});  // 4
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k9", "z"}});  // 5
  for (int i = 0; i < 4; ++i) {
    REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true));
    f.clock.advance(2000);
    f.add({{"p" + std::to_string(i), "x"}});
    REQUIRE_FALSE(f.log->roll());
  }
  auto controls = controls_of(*f.log);
  REQUIRE(controls.size() == 1);
  REQUIRE(controls[0].base_offset == 3);
  REQUIRE(controls[0].attributes & rec::kDeleteHorizonBit);
}

// Kafka's isBatchLastRecordOfProducer: the batch holding an active
// producer's last data offset stays even when compaction takes all of it
// (RETAIN_EMPTY), and so does the marker of a producer whose last write was
// a marker of a new epoch; both go once the producer is no longer active.
TEST_CASE("an active producer's last batch stays, emptied, and so does its last marker", "[storage][cleaner]") {
  Fixture f;  // delete.retention.ms = 1000
  REQUIRE(append(*f.log, kv_batch({{"k1", "a"}}, T0, rec::Compression::none, /*producer_id=*/5)));  // 0, epoch 3
  f.add({{"k1", "b"}});                                                                              // 1
  REQUIRE(append(*f.log, txn_batch({{"k2", "a"}}, 6)));                                             // 2
  REQUIRE(append(*f.log, txn_marker(6, true)));                                                     // 3
  f.add({{"k2", "b"}});                                                                              // 4
  f.add({{"k7", "end"}});                                                                            // 5
  REQUIRE_FALSE(f.log->roll());
  f.add({{"k9", "z"}});  // 6
  f.log->active_producers().set(5, {0, 3});
  f.log->active_producers().set(6, {std::nullopt, 0});
  int passes = 0;
  auto pass = [&] {
    REQUIRE(f.log->clean(f.clock.now(), {}, /*force=*/true));
    f.add({{"p" + std::to_string(passes++), "x"}});
    REQUIRE_FALSE(f.log->roll());
  };
  auto batch_at = [&](int64_t base) -> std::optional<rec::BatchHeader> {
    std::vector<rec::BatchHeader> headers;
    (void)dump(*f.log, &headers);
    for (const auto& h : headers)
      if (h.base_offset == base) return h;
    return std::nullopt;
  };

  pass();  // k1=a and k2=a go; producer 5's batch stays, empty
  auto kept = batch_at(0);
  REQUIRE(kept);
  REQUIRE(kept->records_count == 0);
  REQUIRE(kept->producer_id == 5);
  REQUIRE(kept->producer_epoch == 3);
  REQUIRE(kept->base_sequence == 10);
  REQUIRE_FALSE(batch_at(2));
  f.clock.advance(10);
  pass();  // the marker gets its horizon
  REQUIRE(batch_at(3)->attributes & rec::kDeleteHorizonBit);
  f.clock.advance(1000);
  pass();  // past the horizon: still producer 6's last write
  REQUIRE(batch_at(3));
  REQUIRE(batch_at(0));
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{1, 3, 4, 5, 6, 7, 8, 9});

  // Expired producers: their batches go like any other.
  f.log->active_producers().erase(5);
  f.log->active_producers().erase(6);
  pass();
  REQUIRE_FALSE(batch_at(0));
  REQUIRE_FALSE(batch_at(3));
  REQUIRE(offsets(dump(*f.log)) == std::vector<int64_t>{1, 4, 5, 6, 7, 8, 9, 10});
  REQUIRE(f.leftovers().empty());
}

TEST_CASE("compaction reads segments whose files a restart or an idle pass left closed", "[storage][cleaner]") {
  Fixture f;
  standard_log(f);
  REQUIRE_FALSE(f.log->close());
  LogConfig lags = compact_config();
  lags.min_compaction_lag_ms = 1;
  lags.max_compaction_lag_ms = 1'000'000'000;
  f.open(lags);
  f.clock.advance(10'000);  // past min.compaction.lag.ms
  REQUIRE(f.log->open_segment_count() == 1);
  // The cleaner asks every tick; what it needs of a segment (largest and
  // first batch timestamps) is read once, so idle segments stay closed.
  REQUIRE(f.log->cleanable(f.clock.now())->due);
  REQUIRE(f.log->close_idle_segments() == 0);
  REQUIRE(f.log->close_idle_segments() == 2);
  REQUIRE(f.log->cleanable(f.clock.now())->due);
  REQUIRE(f.log->close_idle_segments() == 0);
  REQUIRE(f.log->open_segment_count() == 1);
  auto r = f.log->clean(f.clock.now());
  REQUIRE(r);
  REQUIRE(r->cleaned);
  REQUIRE(dump(*f.log) == kStandardCompacted);
  // The output closes when idle too, and reads the same opened again.
  REQUIRE(f.log->close_idle_segments() == 0);
  REQUIRE(f.log->close_idle_segments() == 1);
  REQUIRE(f.log->open_segment_count() == 1);
  REQUIRE(dump(*f.log) == kStandardCompacted);
}
