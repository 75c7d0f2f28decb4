// Transactions in a partition: transactional batches hold the last stable
// offset at their first offset until their marker is written and
// replicated; aborted transactions are recorded in the log's index and
// returned by read_committed reads; markers are fenced by producer and
// coordinator epoch; all of it survives a restart and replicates.
#include <catch2/catch.hpp>

#include "protocol/records/batch_builder.h"
#include "protocol/records/control_record.h"
#include "replication/partition.h"
#include "replication/test_partition.h"

using namespace runnel;
using namespace runnel::replication;
using namespace runnel::replication::testing;
using namespace runnel::storage::testing;
using protocol::ErrorCode;
namespace rec = protocol::records;

namespace {

Bytes txn_data(int64_t pid, int16_t epoch, int32_t seq, int records, bool transactional = true) {
  std::vector<Bytes> values(static_cast<size_t>(records), Bytes(8, 'v'));
  std::vector<rec::Record> rs(static_cast<size_t>(records));
  for (int i = 0; i < records; ++i) {
    rs[static_cast<size_t>(i)].offset_delta = i;
    rs[static_cast<size_t>(i)].value = protocol::ByteView(values[static_cast<size_t>(i)]);
  }
  rec::BatchSpec spec;
  spec.transactional = transactional;
  spec.producer_id = pid;
  spec.producer_epoch = epoch;
  spec.base_sequence = seq;
  spec.base_timestamp = 1'700'000'000'000;
  return rec::build_batch(spec, rs);
}

Bytes marker(int64_t pid, int16_t epoch, bool commit, int32_t coordinator_epoch = 0) {
  return rec::build_end_txn_marker_batch(
      pid, epoch, {commit ? rec::ControlRecordType::commit : rec::ControlRecordType::abort, coordinator_epoch},
      1'700'000'000'001);
}

LeaderAppendRequest coordinator_append(Bytes& batch) {
  LeaderAppendRequest r;
  r.origin = AppendOrigin::coordinator;
  r.validate = built_batch(batch);
  return r;
}

struct Txns {
  TempDir dir;
  FakeClock clock;
  std::shared_ptr<storage::Log> log;
  std::shared_ptr<Partition> partition;

  Txns() { open(); }
  void open() {
    auto opened = storage::Log::open(dir.path / "t-0", {}, options_with(clock));
    REQUIRE(opened);
    log = std::move(*opened);
    partition = std::make_shared<Partition>("t", PartitionId(0), log, NodeId(1), clock);
    partition->become_leader_or_follower(PartitionState::single_node(NodeId(1)));
    REQUIRE_FALSE(partition->load_producer_state(clock.now(), 86'400'000));
  }
  void restart() {
    REQUIRE_FALSE(partition->snapshot_producers_before_close());
    REQUIRE_FALSE(log->close());
    partition.reset();
    log.reset();
    open();
  }
  LeaderAppendResult data(int64_t pid, int32_t seq, int records, bool transactional = true) {
    Bytes b = txn_data(pid, pid < 0 ? -1 : 0, seq, records, transactional);
    return partition->append_records_as_leader(client_append(b));
  }
  LeaderAppendResult end(int64_t pid, bool commit, int32_t coordinator_epoch = 0, int16_t epoch = 0) {
    Bytes b = marker(pid, epoch, commit, coordinator_epoch);
    return partition->append_records_as_leader(coordinator_append(b));
  }
  PartitionRead read_committed(int64_t from = 0) {
    return partition->read(Offset(from), 1 << 20, FetchIsolation::txn_committed, std::nullopt, true);
  }
};

int64_t records_end(const PartitionRead& r) {
  int64_t end = -1;
  for (const auto& b : parse_batches(read_region(r.records))) end = b.header.last_offset() + 1;
  return end;
}

}  // namespace

TEST_CASE("an open transaction holds the last stable offset at its first offset", "[replication][txn]") {
  Txns t;
  REQUIRE(t.data(-1, -1, 2, false).ok());  // plain records at 0-1
  REQUIRE(t.data(7, 0, 3).ok());           // producer 7's transaction at 2-4
  CHECK(t.partition->high_watermark() == Offset(5));
  CHECK(t.partition->last_stable_offset() == Offset(2));
  auto r = t.read_committed();
  REQUIRE(r.error == ErrorCode::none);
  CHECK(records_end(r) == 2);  // read_committed stops before the open transaction
  CHECK(r.offsets->last_stable_offset == Offset(2));
  auto uncommitted = t.partition->read(Offset(0), 1 << 20, FetchIsolation::high_watermark, std::nullopt, true);
  CHECK(records_end(uncommitted) == 5);

  REQUIRE(t.end(7, /*commit=*/true).ok());  // the marker at 5
  CHECK(t.partition->last_stable_offset() == Offset(6));
  r = t.read_committed();
  CHECK(records_end(r) == 6);
  CHECK(r.aborted_transactions.empty());
}

TEST_CASE("an aborted transaction is returned to read_committed readers of its range", "[replication][txn]") {
  Txns t;
  REQUIRE(t.data(7, 0, 2).ok());  // 0-1
  REQUIRE(t.data(8, 0, 1).ok());  // 2
  REQUIRE(t.end(7, /*commit=*/false).ok());  // marker at 3
  CHECK(t.partition->last_stable_offset() == Offset(2));  // producer 8 still open
  REQUIRE(t.end(8, /*commit=*/true).ok());   // marker at 4
  CHECK(t.partition->last_stable_offset() == Offset(5));

  auto r = t.read_committed();
  REQUIRE(r.aborted_transactions.size() == 1);
  CHECK(r.aborted_transactions[0] == storage::AbortedTxn{7, 0, 3, 2});
  // A read past the aborted transaction's marker needs none of it.
  CHECK(t.read_committed(4).aborted_transactions.empty());
  // read_uncommitted reads get no list.
  CHECK(t.partition->read(Offset(0), 1 << 20, FetchIsolation::high_watermark, std::nullopt, true)
            .aborted_transactions.empty());
}

TEST_CASE("markers from a fenced coordinator or a stale producer epoch append nothing", "[replication][txn]") {
  Txns t;
  REQUIRE(t.data(7, 0, 1).ok());
  REQUIRE(t.end(7, true, /*coordinator_epoch=*/3).ok());
  const Offset end = t.partition->log_end_offset();
  CHECK(t.end(7, true, /*coordinator_epoch=*/2).status.code == ErrorCode::transaction_coordinator_fenced);
  Bytes bumped = txn_data(7, 2, 0, 1);
  REQUIRE(t.partition->append_records_as_leader(client_append(bumped)).ok());
  CHECK(t.end(7, true, 3, /*epoch=*/1).status.code == ErrorCode::invalid_producer_epoch);
  CHECK(t.partition->log_end_offset() == end + 1);
  // While its transaction is open the producer cannot write outside it.
  Bytes plain = txn_data(7, 2, 1, 1, false);
  CHECK(t.partition->append_records_as_leader(client_append(plain)).status.code == ErrorCode::invalid_txn_state);
}

TEST_CASE("open and aborted transactions survive a restart", "[replication][txn]") {
  Txns t;
  REQUIRE(t.data(7, 0, 2).ok());           // 0-1
  REQUIRE(t.end(7, false).ok());           // 2
  REQUIRE(t.data(8, 0, 1).ok());           // 3, left open
  t.restart();
  CHECK(t.partition->last_stable_offset() == Offset(3));
  auto r = t.read_committed();
  REQUIRE(r.aborted_transactions.size() == 1);
  CHECK(r.aborted_transactions[0] == storage::AbortedTxn{7, 0, 2, 3});
  REQUIRE(t.end(8, true).ok());
  CHECK(t.partition->last_stable_offset() == Offset(5));
}

TEST_CASE("a follower tracks transactions and their index from the leader's batches", "[replication][txn]") {
  Txns leader;
  REQUIRE(leader.data(7, 0, 2).ok());
  REQUIRE(leader.end(7, false).ok());
  REQUIRE(leader.data(8, 0, 1).ok());
  auto all = leader.partition->read(Offset(0), 1 << 20, FetchIsolation::log_end, std::nullopt, true);
  Bytes fetched = read_region(all.records);

  TempDir dir;
  FakeClock clock;
  auto opened = storage::Log::open(dir.path / "t-0", {}, options_with(clock));
  REQUIRE(opened);
  std::shared_ptr<storage::Log> log = std::move(*opened);
  Partition follower("t", PartitionId(0), log, NodeId(2), clock);
  follower.become_leader_or_follower({NodeId(1), LeaderEpoch(0), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}});
  REQUIRE(follower.append_records_as_follower(fetched));
  follower.update_follower_high_watermark(Offset(4));
  CHECK(follower.last_stable_offset() == Offset(3));
  auto aborted = log->collect_aborted_txns(0, 4);
  REQUIRE(aborted);
  REQUIRE(aborted->size() == 1);
  CHECK((*aborted)[0] == storage::AbortedTxn{7, 0, 2, 3});
}

// The cleaner stops at the last stable offset (storage/log_cleaner.cc): the
// partition tells its log where the oldest undecided transaction starts.
TEST_CASE("compaction is bounded by the first offset of an open transaction, also after a restart",
          "[replication][txn]") {
  Txns t;
  REQUIRE(t.data(-1, -1, 2, false).ok());  // 0-1
  REQUIRE(t.data(7, 0, 3).ok());           // 2-4, open
  REQUIRE_FALSE(t.log->roll());
  CHECK(t.log->cleanable(t.clock.now())->first_uncleanable_offset == 2);
  t.restart();
  CHECK(t.log->cleanable(t.clock.now())->first_uncleanable_offset == 2);
  REQUIRE(t.end(7, /*commit=*/true).ok());  // the marker at 5
  REQUIRE_FALSE(t.log->roll());
  CHECK(t.log->cleanable(t.clock.now())->first_uncleanable_offset == 6);
}

// KIP-890's VerificationGuard: the guard a Produce took before asking the
// coordinator is void once a marker for the producer is appended, so a
// write verified before an abort cannot open a new transaction after it.
TEST_CASE("a transactional append needs the producer's verification guard unless its transaction is open",
          "[replication][txn]") {
  Txns t;
  auto verified_append = [&](int32_t seq, uint64_t guard) {
    Bytes b = txn_data(7, 0, seq, 1);
    LeaderAppendRequest r = client_append(b);
    r.verify_transactions = true;
    r.verification_guard = guard;
    return t.partition->append_records_as_leader(r);
  };
  // No guard: refused, nothing appended.
  CHECK(verified_append(0, 0).status.code == ErrorCode::invalid_txn_state);
  CHECK(t.partition->log_end_offset().value() == 0);
  // A guard held: accepted, and the transaction is open.
  const uint64_t guard = t.partition->producers().start_verification(7, 0);
  CHECK(t.partition->producers().start_verification(7, 0) == guard);  // one per producer while held
  REQUIRE(verified_append(0, guard).ok());
  // Inside the open transaction no guard is needed; the one used is gone.
  CHECK_FALSE(t.partition->producers().verified(7, guard));
  REQUIRE(verified_append(1, 0).ok());

  // A guard taken, then the transaction's marker before the append: void.
  const uint64_t before_abort = t.partition->producers().start_verification(7, 0);
  REQUIRE(t.end(7, /*commit=*/false).ok());
  CHECK(verified_append(2, before_abort).status.code == ErrorCode::invalid_txn_state);
  CHECK(t.partition->producers().ongoing_txns().empty());

  // A guard expires with producer.id.expiration.ms.
  const uint64_t stale = t.partition->producers().start_verification(7, 1000);
  t.partition->producers().expire(1000 + 60'000, 60'000);
  CHECK_FALSE(t.partition->producers().verified(7, stale));
}
