// LevelDB-style damage tests: break the files on purpose, reopen, and check
// the log recovers to exactly the last valid batch and reads stay correct.
#include <catch2/catch.hpp>

#include <random>

#include "storage/log.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

constexpr int kBatches = 24;

LogConfig damage_config() {
  LogConfig c;
  c.segment_bytes = 1500;
  c.index_interval_bytes = 200;
  return c;
}

// Batch i: 1 + i % 3 records, timestamps 1000 * (i + 1) + 0, 1, 2.
Bytes numbered_batch(int i) {
  BatchSpec s;
  s.records = 1 + i % 3;
  s.first_timestamp = 1000 * (i + 1);
  s.timestamp_step = 1;
  s.tag = static_cast<uint64_t>(i);
  s.value_size = 40;
  return make_batch(s);
}

struct Damage {
  TempDir tmp;
  FakeClock clock;
  fs::path pristine = tmp.path / "pristine";
  fs::path dir = tmp.path / "t-0";
  std::vector<int64_t> bases;         // segment base offsets
  std::vector<int64_t> batch_offsets;  // first offset of batch i
  std::vector<int64_t> positions;      // position of batch i in its segment's .log

  Damage() {
    LogOptions o;
    o.clock = clock.clock();
    auto log = Log::open(pristine, damage_config(), o);
    REQUIRE(log);
    for (int i = 0; i < kBatches; ++i) {
      auto info = append(**log, numbered_batch(i), 1);
      REQUIRE(info);
      batch_offsets.push_back(info->base_offset);
    }
    batch_offsets.push_back((*log)->log_end_offset());
    bases = (*log)->segment_base_offsets();
    REQUIRE(bases.size() >= 3);
    REQUIRE_FALSE((*log)->close());
    for (int i = 0; i < kBatches; ++i) {
      int64_t base = segment_of(i);
      positions.push_back(i > 0 && segment_of(i - 1) == base
                              ? positions.back() + static_cast<int64_t>(numbered_batch(i - 1).size())
                              : 0);
    }
  }
  int64_t segment_of(int batch) const {
    int64_t b = 0;
    for (int64_t base : bases)
      if (base <= batch_offsets[batch]) b = base;
    return b;
  }
  fs::path log_file(int64_t base) const { return dir / (Segment::file_stem(base) + ".log"); }
  int last_segment_first_batch() const {
    for (int i = 0; i < kBatches; ++i)
      if (segment_of(i) == bases.back()) return i;
    return kBatches;
  }
  void restore() {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::copy(pristine, dir, fs::copy_options::recursive);
  }
  std::unique_ptr<Log> reopen(bool clean) {
    LogOptions o;
    o.clock = clock.clock();
    o.clean_shutdown = clean;
    auto log = Log::open(dir, damage_config(), o);
    REQUIRE(log);
    return std::move(*log);
  }
  // The log holds exactly batches [0, n), each readable from every offset
  // and by its timestamps, and takes appends after them.
  void check_holds(Log& log, int n, bool deep = false) {
    REQUIRE(log.log_end_offset() == batch_offsets[n]);
    auto all = read_all(log);
    REQUIRE(all.size() == static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      REQUIRE(all[i].tag == static_cast<uint64_t>(i));
      REQUIRE(all[i].header.base_offset == batch_offsets[i]);
      REQUIRE(all[i].crc_ok);
    }
    if (deep) {
      for (int i = 0; i < n; ++i)
        for (int64_t o = batch_offsets[i]; o < batch_offsets[i + 1]; ++o) {
          auto r = log.read(o, 1);
          REQUIRE(r);
          auto b = parse_batches(read_region(r->records));
          REQUIRE(b.size() == 1);
          REQUIRE(b[0].tag == static_cast<uint64_t>(i));
        }
      for (int i = 0; i < n; ++i) {
        auto found = log.offset_for_timestamp(1000 * (i + 1) + 1);
        REQUIRE(found);
        REQUIRE(*found);
        REQUIRE((*found)->offset == (i % 3 == 0 ? batch_offsets[i + 1] : batch_offsets[i] + 1));
      }
    }
    auto info = append(log, numbered_batch(n), 1);
    REQUIRE(info);
    REQUIRE(info->base_offset == batch_offsets[n]);
    log.abandon_for_testing();  // no fsyncs: the next case restores the files anyway
  }
};

void damage_file(const fs::path& p, const std::function<void(Bytes&)>& f) {
  Bytes b = file_bytes(p);
  f(b);
  write_bytes(p, b);
}

}  // namespace

TEST_CASE("a last batch cut at every byte is dropped, clean or not", "[storage]") {
  Damage d;
  const int last = kBatches - 1;
  const int64_t start = d.positions[last];
  const int64_t end = start + static_cast<int64_t>(numbered_batch(last).size());
  for (bool clean : {false, true}) {
    for (int64_t cut = start; cut < end; ++cut) {
      CAPTURE(clean, cut);
      d.restore();
      REQUIRE(::truncate(d.log_file(d.bases.back()).c_str(), cut) == 0);
      auto log = d.reopen(clean);
      d.check_holds(*log, last);
      REQUIRE(fs::file_size(d.log_file(d.bases.back())) == static_cast<uintmax_t>(start + numbered_batch(last).size()));
    }
  }
}

TEST_CASE("a flipped byte in a batch of the tail drops it and what follows", "[storage]") {
  Damage d;
  const int first = d.last_segment_first_batch();
  for (int victim = first; victim < kBatches; ++victim) {
    const int64_t start = d.positions[victim];
    const int64_t size = static_cast<int64_t>(numbered_batch(victim).size());
    // baseOffset's top byte and every byte from batchLength on; the rest of
    // baseOffset and partitionLeaderEpoch are outside Kafka's CRC.
    // For the last batch every such byte, for earlier ones every header
    // field and a sample of the records.
    std::vector<int64_t> at{0};
    for (int64_t p = records::kBatchLengthOffset; p < size; ++p)
      if ((p < int64_t{records::kPartitionLeaderEpochOffset} || p >= int64_t{records::kMagicOffset}) &&
          (victim == kBatches - 1 || p < static_cast<int64_t>(records::kHeaderSize) || p % 7 == 0))
        at.push_back(p);
    for (int64_t p : at) {
      CAPTURE(victim, p);
      d.restore();
      damage_file(d.log_file(d.bases.back()), [&](Bytes& b) { b[start + p] ^= 0x80; });
      bool clean = victim == kBatches - 1;  // a clean open checks the tail past the last index entry
      auto log = d.reopen(clean && p % 2 == 0);
      d.check_holds(*log, victim);
    }
  }
}

TEST_CASE("zero-filled tails are cut off", "[storage]") {
  Damage d;
  for (size_t zeros : {size_t{1}, size_t{12}, size_t{61}, size_t{4096}}) {
    for (bool clean : {false, true}) {
      CAPTURE(zeros, clean);
      d.restore();
      damage_file(d.log_file(d.bases.back()), [&](Bytes& b) { b.resize(b.size() + zeros, 0); });
      auto log = d.reopen(clean);
      d.check_holds(*log, kBatches);
    }
  }
  // Zeros over the end of the last batch: that batch goes.
  for (int64_t from : {int64_t{0}, int64_t{30}, int64_t{61}}) {
    d.restore();
    damage_file(d.log_file(d.bases.back()), [&](Bytes& b) {
      std::fill(b.begin() + d.positions[kBatches - 1] + from, b.end(), 0);
    });
    auto log = d.reopen(false);
    d.check_holds(*log, kBatches - 1);
  }
}

TEST_CASE("a corrupt batch in an earlier segment ends the log there on unclean recovery", "[storage]") {
  Damage d;
  int victim = 0;
  while (d.segment_of(victim) != d.bases[1]) ++victim;
  victim += 1;  // second batch of the second segment
  d.restore();
  damage_file(d.log_file(d.bases[1]), [&](Bytes& b) { b[d.positions[victim] + 40] ^= 1; });
  LogOptions o;
  o.clock = d.clock.clock();
  o.recovery_point = 0;
  auto log = Log::open(d.dir, damage_config(), o);
  REQUIRE(log);
  REQUIRE((*log)->segment_base_offsets() == std::vector<int64_t>{d.bases[0], d.bases[1]});
  d.check_holds(**log, victim);
  REQUIRE_FALSE(fs::exists(d.log_file(d.bases[2])));
}

TEST_CASE("deleted or corrupt index files are rebuilt, never trusted", "[storage]") {
  Damage d;
  auto each_index = [&](const std::function<void(const fs::path& idx, const fs::path& tidx)>& f) {
    for (int64_t base : d.bases)
      f(d.dir / (Segment::file_stem(base) + ".index"), d.dir / (Segment::file_stem(base) + ".timeindex"));
  };
  std::mt19937 rng(7);
  SECTION("deleted") {
    d.restore();
    each_index([](const fs::path& i, const fs::path& t) {
      fs::remove(i);
      fs::remove(t);
    });
    auto log = d.reopen(true);
    d.check_holds(*log, kBatches, true);
    REQUIRE(fs::exists(d.dir / (Segment::file_stem(d.bases[0]) + ".index")));
  }
  SECTION("random bytes") {
    d.restore();
    each_index([&](const fs::path& i, const fs::path& t) {
      for (const auto& p : {i, t})
        damage_file(p, [&](Bytes& b) {
          for (auto& x : b) x = static_cast<uint8_t>(rng());
        });
    });
    auto log = d.reopen(true);
    d.check_holds(*log, kBatches, true);
  }
  SECTION("odd sizes") {
    d.restore();
    each_index([&](const fs::path& i, const fs::path& t) {
      damage_file(i, [](Bytes& b) { b.resize(b.size() + 3, 0); });
      damage_file(t, [](Bytes& b) { b.resize(b.size() > 5 ? b.size() - 5 : 0); });
    });
    auto log = d.reopen(false);
    d.check_holds(*log, kBatches, true);
  }
  SECTION("plausible but wrong positions") {
    d.restore();
    // Still sorted and inside the file, but pointing into the middle of batches.
    each_index([&](const fs::path& i, const fs::path&) {
      damage_file(i, [](Bytes& b) {
        for (size_t e = 0; e + 8 <= b.size(); e += 8) b[e + 7] = static_cast<uint8_t>(b[e + 7] + 7);
      });
    });
    auto log = d.reopen(true);
    d.check_holds(*log, kBatches, true);
  }
  SECTION("plausible but wrong offsets") {
    d.restore();
    // Each entry claims a smaller offset than its batch holds.
    each_index([&](const fs::path& i, const fs::path&) {
      damage_file(i, [](Bytes& b) {
        for (size_t e = 0; e + 8 <= b.size(); e += 8)
          if (b[e + 3] > 0) b[e + 3] = static_cast<uint8_t>(b[e + 3] - 1);
      });
    });
    auto log = d.reopen(true);
    d.check_holds(*log, kBatches, true);
  }
  SECTION("preallocated zeros after a crash") {
    d.restore();
    each_index([&](const fs::path& i, const fs::path& t) {
      damage_file(i, [](Bytes& b) { b.resize(4096, 0); });
      damage_file(t, [](Bytes& b) { b.resize(4092, 0); });
    });
    auto log = d.reopen(true);
    d.check_holds(*log, kBatches, true);
  }
}

TEST_CASE("a log abandoned mid-write (untrimmed, preallocated files) recovers", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  LogConfig c = damage_config();
  c.preallocate = true;
  fs::path dir = tmp.path / "t-0";
  int64_t leo;
  {
    auto log = Log::open(dir, c, options_with(clock));
    REQUIRE(log);
    for (int i = 0; i < kBatches; ++i) REQUIRE(append(**log, numbered_batch(i)));
    leo = (*log)->log_end_offset();
    auto bases = (*log)->segment_base_offsets();
    (*log)->abandon_for_testing();
    REQUIRE(fs::file_size(dir / (Segment::file_stem(bases.back()) + ".log")) == 1500);
    REQUIRE(fs::file_size(dir / (Segment::file_stem(bases.back()) + ".index")) == 10 << 20);
  }
  auto log = Log::open(dir, c, options_with(clock));
  REQUIRE(log);
  REQUIRE((*log)->log_end_offset() == leo);
  auto all = read_all(**log);
  REQUIRE(all.size() == kBatches);
  for (int i = 0; i < kBatches; ++i) REQUIRE(all[i].tag == static_cast<uint64_t>(i));
}
