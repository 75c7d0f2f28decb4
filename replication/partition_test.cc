// Partition: the high watermark is the partition's to move (the ISR's
// smallest log end offset), reads stop at it, the leader epoch and
// min.insync.replicas rules answer as Kafka's Partition does, and so does
// the low watermark DeleteRecords waits for.
#include <catch2/catch.hpp>

#include <set>

#include "replication/partition.h"
#include "protocol/records/batch_format.h"
#include "replication/test_partition.h"

using namespace runnel;
using namespace runnel::replication;
using namespace runnel::replication::testing;
using namespace runnel::storage::testing;
using protocol::ErrorCode;

namespace {

struct Fixture {
  TempDir dir;
  FakeClock clock;
  std::shared_ptr<storage::Log> log;
  std::shared_ptr<Partition> partition;

  std::shared_ptr<storage::LogDirFailure> dir_failure = std::make_shared<storage::LogDirFailure>();

  explicit Fixture(PartitionState state = PartitionState::single_node(NodeId(1)), storage::LogConfig config = {}) {
    auto options = options_with(clock);
    options.dir_failure = dir_failure;
    auto opened = storage::Log::open(dir.path / "t-0", config, options);
    REQUIRE(opened);
    log = std::move(*opened);
    partition = std::make_shared<Partition>("t", PartitionId(0), log, NodeId(1));
    partition->become_leader_or_follower(state);
  }
  LeaderAppendResult append(int records, int16_t acks = -1, int32_t min_isr = 1) {
    Bytes b = batch_of(records, 7);
    return partition->append_records_as_leader(client_append(b, acks, min_isr));
  }
};

// A leader of its own over a log of 1024-byte segments.
struct SmallSegments {
  TempDir dir;
  FakeClock clock;
  std::shared_ptr<storage::Log> log;
  std::unique_ptr<Partition> partition;

  SmallSegments() {
    storage::LogConfig small;
    small.segment_bytes = 1024;
    auto opened = storage::Log::open(dir.path / "t-0", small, options_with(clock));
    REQUIRE(opened);
    log = std::move(*opened);
    partition = std::make_unique<Partition>("t", PartitionId(0), log, NodeId(1));
    partition->become_leader_or_follower(PartitionState::single_node(NodeId(1)));
  }
};

PartitionState with_follower() { return {NodeId(1), LeaderEpoch(4), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}}; }

}  // namespace

TEST_CASE("the log stores the high watermark but only the partition moves it", "[replication][partition]") {
  Fixture f;
  Bytes raw = batch_of(2, 1);
  REQUIRE(f.log->append(std::span<uint8_t>(raw.data(), raw.size()), 0));
  REQUIRE(f.log->log_end_offset() == 2);
  REQUIRE(f.log->high_watermark() == 0);  // a bare log append commits nothing

  auto r = f.append(3);
  REQUIRE(r.ok());
  REQUIRE(r.base_offset == Offset(2));
  REQUIRE(r.last_offset == Offset(4));
  // One replica: the leader's append is the ISR's, so the high watermark
  // is the log end offset right after it.
  REQUIRE(f.partition->high_watermark() == Offset(5));
  auto read = f.partition->read(Offset(0), 1 << 20, FetchIsolation::high_watermark, std::nullopt, true);
  REQUIRE(read.error == ErrorCode::none);
  REQUIRE(read.records.length > 0);
  REQUIRE(read.offsets->high_watermark == Offset(5));
}

TEST_CASE("a follower in the ISR holds the high watermark until its fetch has the records", "[replication][partition]") {
  Fixture f(with_follower());
  REQUIRE(f.append(3).ok());
  REQUIRE(f.partition->log_end_offset() == Offset(3));
  REQUIRE(f.partition->high_watermark() == Offset(0));

  // A consumer sees nothing yet; a replica reads to the log end.
  auto consumer = f.partition->read(Offset(0), 1 << 20, FetchIsolation::high_watermark, std::nullopt, true);
  REQUIRE(consumer.error == ErrorCode::none);
  REQUIRE(consumer.records.length == 0);
  auto replica = f.partition->read(Offset(0), 1 << 20, FetchIsolation::log_end, std::nullopt, true);
  REQUIRE(replica.records.length > 0);
  // ListOffsets' latest is the high watermark for a consumer.
  auto latest = f.partition->fetch_offset_for_timestamp(-1, FetchIsolation::high_watermark, std::nullopt, true);
  REQUIRE(latest.found->offset == 0);
  REQUIRE(latest.found->leader_epoch == 4);

  ErrorCode error = ErrorCode::none;
  REQUIRE_FALSE(f.partition->enough_replicas_reached(Offset(3), 1, error));
  f.partition->update_follower_fetch_state(NodeId(2), Offset(2), Offset(0));
  REQUIRE(f.partition->high_watermark() == Offset(2));
  f.partition->update_follower_fetch_state(NodeId(2), Offset(3), Offset(0));
  REQUIRE(f.partition->high_watermark() == Offset(3));
  REQUIRE(f.partition->enough_replicas_reached(Offset(3), 1, error));
  REQUIRE(error == ErrorCode::none);
  // The ISR shrank below min.insync.replicas while the produce waited.
  REQUIRE(f.partition->enough_replicas_reached(Offset(3), 3, error));
  REQUIRE(error == ErrorCode::not_enough_replicas_after_append);
}

TEST_CASE("leader epoch fencing as Kafka's Partition.getLocalLog", "[replication][partition]") {
  Fixture f(with_follower());  // epoch 4
  REQUIRE(f.partition->check_local_log(std::nullopt, true) == ErrorCode::none);
  REQUIRE(f.partition->check_local_log(LeaderEpoch(4), true) == ErrorCode::none);
  REQUIRE(f.partition->check_local_log(LeaderEpoch(3), true) == ErrorCode::fenced_leader_epoch);
  REQUIRE(f.partition->check_local_log(LeaderEpoch(5), true) == ErrorCode::unknown_leader_epoch);
  auto fenced = f.partition->read(Offset(0), 1 << 20, FetchIsolation::high_watermark, LeaderEpoch(3), true);
  REQUIRE(fenced.error == ErrorCode::fenced_leader_epoch);
  REQUIRE_FALSE(fenced.offsets);  // a fenced reader is told nothing about the log
  auto end = f.partition->last_offset_for_leader_epoch(LeaderEpoch(5), LeaderEpoch(0), true);
  REQUIRE(end.error == ErrorCode::unknown_leader_epoch);

  // Broker 2 leads now: this one follows, in the new epoch.
  f.partition->become_leader_or_follower({NodeId(2), LeaderEpoch(5), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}});
  REQUIRE(f.partition->role() == Role::follower);
  REQUIRE(f.partition->check_local_log(LeaderEpoch(5), true) == ErrorCode::not_leader_or_follower);
  REQUIRE(f.partition->check_local_log(LeaderEpoch(5), false) == ErrorCode::none);
  REQUIRE(f.partition->check_local_log(LeaderEpoch(4), false) == ErrorCode::fenced_leader_epoch);
  auto refused = f.append(1);
  REQUIRE(refused.status.code == ErrorCode::not_leader_or_follower);
  REQUIRE(f.partition->log_end_offset() == Offset(0));
}

TEST_CASE("a partition on an offline log dir answers KAFKA_STORAGE_ERROR to every read", "[replication][partition]") {
  Fixture f;
  REQUIRE(f.append(2).ok());
  f.dir_failure->mark_offline(std::make_error_code(std::errc::no_space_on_device));
  REQUIRE(f.partition->check_local_log(std::nullopt, true) == ErrorCode::kafka_storage_error);
  // Checked before the epoch, as Kafka finds the partition offline first.
  REQUIRE(f.partition->check_local_log(LeaderEpoch(9), true) == ErrorCode::kafka_storage_error);
  auto latest = f.partition->fetch_offset_for_timestamp(-1, FetchIsolation::high_watermark, std::nullopt, true);
  REQUIRE(latest.error == ErrorCode::kafka_storage_error);
  REQUIRE_FALSE(latest.found);
  auto read = f.partition->read(Offset(0), 1 << 20, FetchIsolation::high_watermark, std::nullopt, true);
  REQUIRE(read.error == ErrorCode::kafka_storage_error);
}

TEST_CASE("the partition snapshots its producers where an append rolls the log, and at close", "[replication][partition]") {
  SmallSegments f;
  auto& log = f.log;
  auto& partition = *f.partition;
  REQUIRE_FALSE(partition.load_producer_state(Clock::system().wall_ms(), 86'400'000));

  int32_t seq = 0;
  while (log->segment_count() < 2) {
    Bytes b = batch_of(2, 3, 100, Clock::system().wall_ms());
    auto h = *protocol::records::read_batch_header(b);
    h.producer_id = 42;
    h.producer_epoch = 0;
    h.base_sequence = seq;
    protocol::records::write_batch_header(h, b.data());
    h.crc = protocol::records::compute_batch_crc(b);
    protocol::records::write_batch_header(h, b.data());
    REQUIRE(partition.append_records_as_leader(client_append(b, 1)).ok());
    seq += 2;
  }
  const int64_t base = log->segment_base_offsets().back();
  auto at_roll = storage::read_producer_snapshot(log->dir(), base);
  REQUIRE(at_roll);
  REQUIRE(at_roll->size() == 1);
  // The state before the batch that opened the segment: its last offset is base - 1.
  REQUIRE(at_roll->at(0).producer_id == 42);
  REQUIRE(at_roll->at(0).last_offset == base - 1);

  REQUIRE_FALSE(partition.snapshot_producers_before_close());
  auto at_end = storage::read_producer_snapshot(log->dir(), log->log_end_offset());
  REQUIRE(at_end);
  REQUIRE(at_end->at(0).last_offset == log->log_end_offset() - 1);
  REQUIRE_FALSE(log->close());
}

TEST_CASE("acks=all with fewer ISR members than min.insync.replicas appends nothing", "[replication][partition]") {
  Fixture f;
  auto refused = f.append(2, -1, 2);
  REQUIRE(refused.status.code == ErrorCode::not_enough_replicas);
  REQUIRE(refused.status.message ==
          "The size of the current ISR 1 is insufficient to satisfy the min.isr requirement of 2");
  REQUIRE(f.partition->log_end_offset() == Offset(0));
  // acks=1 does not ask for the ISR.
  REQUIRE(f.append(2, 1, 2).ok());
  REQUIRE(f.partition->log_end_offset() == Offset(2));
}

TEST_CASE("records larger than segment.bytes are RECORD_LIST_TOO_LARGE, as Kafka's RecordBatchTooLargeException",
          "[replication][partition]") {
  SmallSegments f;
  auto& log = f.log;
  auto& partition = *f.partition;

  Bytes big = batch_of(20, 3, 100);
  REQUIRE(big.size() > 1024);
  auto refused = partition.append_records_as_leader(client_append(big, -1));
  REQUIRE(refused.status.code == ErrorCode::record_list_too_large);  // not KAFKA_STORAGE_ERROR: not retried
  REQUIRE(partition.log_end_offset() == Offset(0));
  REQUIRE_FALSE(log->dir_offline());
  Bytes fits = batch_of(2, 3, 100);
  REQUIRE(partition.append_records_as_leader(client_append(fits, -1)).ok());
  REQUIRE(partition.log_end_offset() == Offset(2));
  REQUIRE_FALSE(log->close());
}

TEST_CASE("the low watermark is the smallest log start of the leader and its live followers",
          "[replication][partition]") {
  const PartitionState three{NodeId(1), LeaderEpoch(4), {NodeId(1), NodeId(2), NodeId(3)}, {NodeId(1), NodeId(2)}};
  Fixture f(three);
  std::set<NodeId> dead;
  auto is_live = [&dead](NodeId n) { return !dead.contains(n); };
  REQUIRE(f.append(10, 1).ok());
  // Kafka's ReplicaState starts unknown: a live follower that has not
  // fetched since this leader's epoch began holds the low watermark there,
  // in the ISR or not.
  CHECK(f.partition->low_watermark_if_leader(is_live) == kUnknownOffset);
  f.partition->update_follower_fetch_state(NodeId(2), Offset(10), Offset(0));
  CHECK(f.partition->low_watermark_if_leader(is_live) == kUnknownOffset);
  dead.insert(NodeId(3));
  CHECK(f.partition->low_watermark_if_leader(is_live) == Offset(0));
  dead.clear();
  f.partition->update_follower_fetch_state(NodeId(3), Offset(4), Offset(0));

  REQUIRE(f.log->delete_records(7));
  CHECK(f.partition->low_watermark_if_leader(is_live) == Offset(0));
  f.partition->update_follower_fetch_state(NodeId(2), Offset(10), Offset(7));
  CHECK(f.partition->low_watermark_if_leader(is_live) == Offset(0));  // node 3 is behind
  f.partition->update_follower_fetch_state(NodeId(3), Offset(10), Offset(5));
  CHECK(f.partition->low_watermark_if_leader(is_live) == Offset(5));
  f.partition->update_follower_fetch_state(NodeId(3), Offset(10), Offset(7));
  CHECK(f.partition->low_watermark_if_leader(is_live) == Offset(7));
  // A log start past the leader's (never sent by a follower that adopts
  // the leader's) does not raise it above the leader's own.
  f.partition->update_follower_fetch_state(NodeId(2), Offset(10), Offset(9));
  CHECK(f.partition->low_watermark_if_leader(is_live) == Offset(7));

  // A new leader epoch forgets the followers' log starts.
  PartitionState next = three;
  next.leader_epoch = LeaderEpoch(5);
  f.partition->become_leader_or_follower(next);
  CHECK(f.partition->low_watermark_if_leader(is_live) == kUnknownOffset);
  next.leader = NodeId(2);
  next.leader_epoch = LeaderEpoch(6);
  f.partition->become_leader_or_follower(next);
  CHECK(f.partition->low_watermark_if_leader(is_live) == kUnknownOffset);  // not the leader
}
