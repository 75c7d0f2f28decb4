// Partition::load_producer_state: the state loaded from a snapshot plus the
// log after it answers every produce as a full replay of the log does.
#include <catch2/catch.hpp>

#include "replication/partition.h"
#include "replication/test_partition.h"
#include "storage/test_util.h"

using namespace runnel::broker;
using namespace runnel::replication;
using runnel::NodeId;
using runnel::PartitionId;
using namespace runnel::storage::testing;
using runnel::protocol::ErrorCode;
namespace storage = runnel::storage;
namespace rec = runnel::protocol::records;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kExpiration = 86'400'000;

storage::LogConfig small_segments() {
  storage::LogConfig c;
  c.segment_bytes = 2048;
  c.file_delete_delay_ms = 0;
  return c;
}

Bytes idempotent_batch(int64_t pid, int16_t epoch, int32_t first_seq, int records, int64_t ts) {
  Bytes b = batch_of(records, static_cast<uint64_t>(pid), 40, ts);
  auto h = *rec::read_batch_header(b);
  h.producer_id = pid;
  h.producer_epoch = epoch;
  h.base_sequence = first_seq;
  rec::write_batch_header(h, b.data());
  h.crc = rec::compute_batch_crc(b);
  rec::write_batch_header(h, b.data());
  return b;
}

struct Produced {
  ErrorCode error;
};

// A leader's append, as a Produce makes it: the partition checks the
// sequence, appends, records the batch and snapshots where the log rolls.
Produced produce(Partition& p, Bytes b) {
  auto r = p.append_records_as_leader(runnel::replication::testing::client_append(b, 1));
  return {r.status.code};
}

// The partition's clock, read from the test's.
struct TestClock final : runnel::Clock {
  explicit TestClock(FakeClock c) : fake(std::move(c)) {}
  int64_t wall_ms() const override { return fake.now(); }
  int64_t steady_ms() const override { return fake.now(); }
  FakeClock fake;
};

int32_t seq_add(int32_t seq, int n) { return static_cast<int32_t>((int64_t(seq) + n) % (int64_t(INT32_MAX) + 1)); }

struct Producer {
  int64_t pid;
  int16_t epoch = 0;
  int32_t next_seq = 0;
};

// A partition over the log in `dir`, opened clean or not.
struct Opened {
  std::shared_ptr<storage::Log> log;
  std::unique_ptr<TestClock> clock;
  std::unique_ptr<Partition> partition;
  // What the broker does at a clean shutdown.
  std::error_code close() {
    if (auto ec = partition->snapshot_producers_before_close()) return ec;
    return log->close();
  }
};

Opened open_partition(const fs::path& dir, const FakeClock& clock, bool clean, int64_t recovery_point = 0) {
  auto o = options_with(clock);
  o.clean_shutdown = clean;
  o.recovery_point = recovery_point;
  auto log = storage::Log::open(dir, small_segments(), o);
  REQUIRE(log);
  Opened out;
  out.log = std::move(*log);
  out.clock = std::make_unique<TestClock>(clock);
  out.partition = std::make_unique<Partition>("t", PartitionId(0), out.log, NodeId(1), *out.clock);
  out.partition->become_leader_or_follower(PartitionState::single_node(NodeId(1)));
  REQUIRE_FALSE(out.partition->load_producer_state(clock.now(), kExpiration));
  return out;
}

// Writes a stream from several producers (one epoch bump, one sequence
// wrap) until the log has rolled a few times.
std::vector<Producer> write_stream(Partition& p, const FakeClock& clock) {
  std::vector<Producer> producers{{1000}, {2000}, {3000, 2, INT32_MAX - 6}};
  for (int round = 0; p.log().segment_count() < 4; ++round) {
    for (auto& pr : producers) {
      int n = 1 + round % 3;
      REQUIRE(produce(p, idempotent_batch(pr.pid, pr.epoch, pr.next_seq, n, clock.now())).error == ErrorCode::none);
      pr.next_seq = seq_add(pr.next_seq, n);
    }
    if (round == 3) {
      producers[1].epoch = 1;  // a bumped epoch restarts at 0
      producers[1].next_seq = 0;
    }
  }
  return producers;
}

// The answers both tables must give: per producer its epoch and last
// batch, and the outcome of the next batch, a gap, an old epoch and a
// retry of the last batch.
void require_same_answers(Partition& loaded, Partition& replayed, const std::vector<Producer>& producers,
                          const FakeClock& clock) {
  REQUIRE(loaded.producers().size() == replayed.producers().size());
  for (const auto& pr : producers) {
    const ProducerEntry* a = loaded.producers().find(pr.pid);
    const ProducerEntry* b = replayed.producers().find(pr.pid);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE(a->epoch == b->epoch);
    REQUIRE(a->last_timestamp == b->last_timestamp);
    const BatchMetadata& la = a->batches.back();
    const BatchMetadata& lb = b->batches.back();
    REQUIRE(la.first_seq == lb.first_seq);
    REQUIRE(la.last_seq == lb.last_seq);
    REQUIRE(la.first_offset == lb.first_offset);
    REQUIRE(la.last_offset == lb.last_offset);

    auto ask = [&](int16_t epoch, int32_t seq, int n) {
      auto h = *rec::read_batch_header(idempotent_batch(pr.pid, epoch, seq, n, clock.now()));
      SequenceCheck x = loaded.producers().check(h), y = replayed.producers().check(h);
      REQUIRE(x.error == y.error);
      REQUIRE((x.duplicate_of == nullptr) == (y.duplicate_of == nullptr));
      if (x.duplicate_of) REQUIRE(x.duplicate_of->first_offset == y.duplicate_of->first_offset);
      return x;
    };
    REQUIRE(ask(pr.epoch, pr.next_seq, 2).error == ErrorCode::none);
    REQUIRE(ask(pr.epoch, seq_add(pr.next_seq, 1), 1).error == ErrorCode::out_of_order_sequence_number);
    REQUIRE(ask(pr.epoch + 1, 0, 1).error == ErrorCode::none);
    REQUIRE(ask(pr.epoch + 1, 5, 1).error == ErrorCode::out_of_order_sequence_number);
    if (pr.epoch > 0) REQUIRE(ask(pr.epoch - 1, pr.next_seq, 1).error == ErrorCode::invalid_producer_epoch);
    auto retry = ask(pr.epoch, la.first_seq, static_cast<int>(la.last_offset - la.first_offset + 1));
    REQUIRE(retry.duplicate_of);
    REQUIRE(retry.duplicate_of->first_offset == la.first_offset);
  }
}

// The reference: the same log with every snapshot removed, replayed whole.
Opened full_replay(const TempDir& dir, const TempDir& copy, const FakeClock& clock) {
  fs::remove_all(copy.path);
  fs::copy(dir.path, copy.path, fs::copy_options::recursive);
  for (int64_t o : storage::list_producer_snapshots(copy.path)) REQUIRE_FALSE(storage::delete_producer_snapshot(copy.path, o));
  return open_partition(copy.path, clock, /*clean=*/false);
}

}  // namespace

TEST_CASE("after a clean shutdown the snapshot at the log end offset is the whole state", "[producer][snapshot]") {
  TempDir dir, copy;
  FakeClock clock;
  std::vector<Producer> producers;
  int64_t leo;
  {
    auto p = open_partition(dir.path, clock, false);
    producers = write_stream(*p.partition, clock);
    leo = p.log->log_end_offset();
    REQUIRE_FALSE(p.close());
  }
  auto snapshots = storage::list_producer_snapshots(dir.path);
  REQUIRE(snapshots.back() == leo);
  auto at_end = storage::read_producer_snapshot(dir.path, leo);
  REQUIRE(at_end);
  REQUIRE(at_end->size() == 3);

  auto loaded = open_partition(dir.path, clock, /*clean=*/true, leo);
  auto replayed = full_replay(dir, copy, clock);
  require_same_answers(*loaded.partition, *replayed.partition, producers, clock);
  // Loading from the snapshot at the end wrote nothing new.
  REQUIRE(storage::list_producer_snapshots(dir.path).back() == leo);
  loaded.log->abandon_for_testing();
  replayed.log->abandon_for_testing();
}

TEST_CASE("after a crash the latest roll snapshot and the log after it give the replayed state",
          "[producer][snapshot]") {
  TempDir dir, copy;
  FakeClock clock;
  std::vector<Producer> producers;
  int64_t leo;
  {
    auto p = open_partition(dir.path, clock, false);
    producers = write_stream(*p.partition, clock);
    // A few batches past the last roll, then the process dies: no snapshot
    // at the log end.
    for (auto& pr : producers) {
      REQUIRE(produce(*p.partition, idempotent_batch(pr.pid, pr.epoch, pr.next_seq, 1, clock.now())).error ==
              ErrorCode::none);
      pr.next_seq = seq_add(pr.next_seq, 1);
    }
    leo = p.log->log_end_offset();
    REQUIRE_FALSE(p.log->sync());
    p.log->abandon_for_testing();
  }
  auto bases = storage::list_producer_snapshots(dir.path);
  REQUIRE(bases.back() < leo);

  SECTION("the latest snapshot is valid") {
    auto loaded = open_partition(dir.path, clock, /*clean=*/false);
    auto replayed = full_replay(dir, copy, clock);
    require_same_answers(*loaded.partition, *replayed.partition, producers, clock);
    // The rebuilt state was snapshotted at the log end, as Kafka does.
    REQUIRE(storage::list_producer_snapshots(dir.path).back() == leo);
    loaded.log->abandon_for_testing();
    replayed.log->abandon_for_testing();
  }
  SECTION("a corrupt latest snapshot is deleted and the one before it used") {
    fs::path latest = storage::producer_snapshot_path(dir.path, bases.back());
    Bytes b = file_bytes(latest);
    b[12] ^= 0xFF;
    write_bytes(latest, b);
    auto loaded = open_partition(dir.path, clock, /*clean=*/false);
    auto replayed = full_replay(dir, copy, clock);
    require_same_answers(*loaded.partition, *replayed.partition, producers, clock);
    // Rewritten from the replay (it is the last segment's base), valid again.
    REQUIRE(storage::read_producer_snapshot(dir.path, bases.back()));
    loaded.log->abandon_for_testing();
    replayed.log->abandon_for_testing();
  }
}

TEST_CASE("expired producers are neither written into snapshots nor loaded from them", "[producer][snapshot]") {
  TempDir dir;
  FakeClock clock;
  int64_t leo;
  {
    auto p = open_partition(dir.path, clock, false);
    REQUIRE(produce(*p.partition, idempotent_batch(1, 0, 0, 1, clock.now())).error == ErrorCode::none);
    clock.advance(kExpiration - 1000);
    REQUIRE(produce(*p.partition, idempotent_batch(2, 0, 0, 1, clock.now())).error == ErrorCode::none);
    clock.advance(1000);  // producer 1 is now exactly producer.id.expiration.ms old: expired
    leo = p.log->log_end_offset();
    REQUIRE_FALSE(p.close());
  }
  auto written = storage::read_producer_snapshot(dir.path, leo);
  REQUIRE(written);
  REQUIRE(written->size() == 1);
  REQUIRE(written->at(0).producer_id == 2);

  // A snapshot holding a producer that expired since is loaded without it.
  std::vector<storage::ProducerSnapshotEntry> both(2);
  both[0].producer_id = 1, both[0].epoch = 0, both[0].last_sequence = 0, both[0].last_offset = 0;
  both[0].timestamp = clock.now() - kExpiration;
  both[1].producer_id = 2, both[1].epoch = 0, both[1].last_sequence = 0, both[1].last_offset = 1;
  both[1].timestamp = clock.now() - 1000;
  REQUIRE_FALSE(storage::write_producer_snapshot(dir.path, leo, both));
  auto loaded = open_partition(dir.path, clock, /*clean=*/true, leo);
  REQUIRE(loaded.partition->producers().find(1) == nullptr);
  REQUIRE(loaded.partition->producers().find(2) != nullptr);

  // The periodic check drops producer 2 once it too is idle long enough.
  const int64_t producer2_expires = both[1].timestamp + kExpiration;
  loaded.partition->expire_producers(producer2_expires - 1);
  REQUIRE(loaded.partition->producers().find(2) != nullptr);
  loaded.partition->expire_producers(producer2_expires);
  REQUIRE(loaded.partition->producers().size() == 0);
  loaded.log->abandon_for_testing();
}
