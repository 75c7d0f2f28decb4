// Partition's follower side and its leader's handling of a replica's fetch,
// without a network: a leader and a follower Partition over logs of their
// own, the follower appending exactly the bytes the leader's read returns.
#include <catch2/catch.hpp>

#include <unistd.h>

#include "protocol/records/batch_format.h"
#include "replication/partition.h"
#include "replication/test_partition.h"

using namespace runnel;
using namespace runnel::replication;
using namespace runnel::replication::testing;
using namespace runnel::storage::testing;
using protocol::ErrorCode;
namespace rec = protocol::records;

namespace {

const PartitionState kLedBy1{NodeId(1), LeaderEpoch(3), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}};

struct Replica {
  TempDir dir;
  std::shared_ptr<storage::Log> log;
  std::shared_ptr<Partition> partition;
  Replica(NodeId self, const PartitionState& state) {
    storage::LogConfig config;
    config.segment_bytes = 2048;  // a few batches a segment: the follower rolls where the leader did
    auto opened = storage::Log::open(dir.path / "t-0", config, storage::LogOptions{});
    REQUIRE(opened);
    log = std::move(*opened);
    partition = std::make_shared<Partition>("t", PartitionId(0), log, self);
    partition->become_leader_or_follower(state);
    REQUIRE_FALSE(partition->load_producer_state(Clock::system().wall_ms(), 86'400'000));
  }
};

Bytes idempotent_batch(int64_t pid, int32_t first_seq, int records) {
  Bytes b = batch_of(records, static_cast<uint64_t>(first_seq), 100, Clock::system().wall_ms());
  auto h = *rec::read_batch_header(b);
  h.producer_id = pid;
  h.producer_epoch = 0;
  h.base_sequence = first_seq;
  rec::write_batch_header(h, b.data());
  h.crc = rec::compute_batch_crc(b);
  rec::write_batch_header(h, b.data());
  return b;
}

Bytes bytes_of(const protocol::FileRegion& region) {
  Bytes out(static_cast<size_t>(region.length));
  REQUIRE(::pread(region.fd, out.data(), out.size(), region.offset) == static_cast<ssize_t>(out.size()));
  return out;
}

// One replica fetch by node 2 at its log end, appended on the follower.
void replicate(Partition& leader, Partition& follower) {
  ReplicaFetch from2{NodeId(2)};
  auto read = leader.fetch_records_for_follower(from2, follower.log_end_offset(), follower.log_start_offset(),
                                                follower.log().latest_epoch()
                                                    ? std::optional(LeaderEpoch(*follower.log().latest_epoch()))
                                                    : std::nullopt,
                                                1 << 20, LeaderEpoch(3), true, true);
  REQUIRE(read.error == ErrorCode::none);
  REQUIRE_FALSE(read.diverging_epoch);
  if (read.records.length > 0) REQUIRE(follower.append_records_as_follower(bytes_of(read.records)));
  follower.update_follower_high_watermark(read.offsets->high_watermark);
}

}  // namespace

TEST_CASE("a new leader epoch is recorded at the log end, and the leader's batches carry it",
          "[replication][partition]") {
  Replica leader(NodeId(1), PartitionState::single_node(NodeId(1)));
  Bytes first = batch_of(3, 1);
  REQUIRE(leader.partition->append_records_as_leader(client_append(first, 1)).ok());
  REQUIRE(leader.log->leader_epochs() == std::vector<storage::EpochEntry>{{0, 0}});
  leader.partition->become_leader_or_follower(kLedBy1);
  CHECK(leader.log->leader_epochs() == std::vector<storage::EpochEntry>{{0, 0}, {3, 3}});
  Bytes second = batch_of(2, 2);
  REQUIRE(leader.partition->append_records_as_leader(client_append(second, 1)).ok());
  CHECK(rec::read_batch_header(second)->partition_leader_epoch == 3);
  // The same epoch again (a metadata update that changes only the ISR) records nothing new.
  leader.partition->become_leader_or_follower(kLedBy1);
  CHECK(leader.log->leader_epochs() == std::vector<storage::EpochEntry>{{0, 0}, {3, 3}});
}

TEST_CASE("a follower keeps the idempotent producers' state, so a duplicate is caught after failover",
          "[replication][partition]") {
  Replica leader(NodeId(1), kLedBy1);
  Replica follower(NodeId(2), kLedBy1);
  int32_t seq = 0;
  Bytes last;
  while (leader.log->segment_count() < 3) {
    last = idempotent_batch(42, seq, 2);
    Bytes appended = last;
    REQUIRE(leader.partition->append_records_as_leader(client_append(appended, 1)).ok());
    seq += 2;
  }
  // A read returns one segment's batches at most: a fetch a segment, then
  // one to report the log end (the high watermark moves), one to learn it.
  for (int i = 0; i < 10 && follower.log->high_watermark() < leader.log->log_end_offset(); ++i)
    replicate(*leader.partition, *follower.partition);
  REQUIRE(follower.log->log_end_offset() == leader.log->log_end_offset());
  CHECK(follower.log->segment_base_offsets() == leader.log->segment_base_offsets());
  CHECK(follower.log->high_watermark() == leader.log->high_watermark());
  // Producer snapshots where the follower rolled, as the leader wrote them.
  CHECK(storage::list_producer_snapshots(follower.log->dir()) == storage::list_producer_snapshots(leader.log->dir()));
  const auto* entry = follower.partition->producers().find(42);
  REQUIRE(entry);
  CHECK(entry->batches.back().last_seq == seq - 1);

  // Node 2 takes over in epoch 4; the producer retries its last batch.
  follower.partition->become_leader_or_follower({NodeId(2), LeaderEpoch(4), {NodeId(1), NodeId(2)}, {NodeId(2)}});
  auto retried = follower.partition->append_records_as_leader(client_append(last, 1));
  CHECK(retried.ok());
  CHECK(retried.duplicate);
  CHECK(follower.log->log_end_offset() == leader.log->log_end_offset());
}

TEST_CASE("a replica fetch from an older incarnation of the broker is fenced", "[replication][partition]") {
  Replica leader(NodeId(1), kLedBy1);
  Bytes b = batch_of(2, 1);
  REQUIRE(leader.partition->append_records_as_leader(client_append(b, 1)).ok());
  ReplicaFetch stale{NodeId(2), /*broker_epoch=*/5, /*known_broker_epoch=*/6};
  auto fenced = leader.partition->fetch_records_for_follower(stale, Offset(2), Offset(0), std::nullopt, 1 << 20,
                                                             LeaderEpoch(3), true, true);
  CHECK(fenced.error == ErrorCode::not_leader_or_follower);
  CHECK(fenced.records.length == 0);
  CHECK(leader.partition->high_watermark() == Offset(0));
  ReplicaFetch current{NodeId(2), 6, 6};
  auto ok = leader.partition->fetch_records_for_follower(current, Offset(2), Offset(0), std::nullopt, 1 << 20,
                                                         LeaderEpoch(3), true, true);
  CHECK(ok.error == ErrorCode::none);
  CHECK(leader.partition->high_watermark() == Offset(2));
}

TEST_CASE("a follower's truncation reloads the producer state for what the log still holds",
          "[replication][partition]") {
  Replica follower(NodeId(2), kLedBy1);
  Replica leader(NodeId(1), kLedBy1);
  for (int32_t seq = 0; seq < 6; seq += 2) {
    Bytes batch = idempotent_batch(7, seq, 2);
    REQUIRE(leader.partition->append_records_as_leader(client_append(batch, 1)).ok());
  }
  replicate(*leader.partition, *follower.partition);
  REQUIRE(follower.partition->producers().find(7)->batches.back().last_seq == 5);
  REQUIRE_FALSE(follower.partition->truncate_to(Offset(2)));
  CHECK(follower.log->log_end_offset() == 2);
  REQUIRE(follower.partition->producers().find(7));
  CHECK(follower.partition->producers().find(7)->batches.back().last_seq == 1);
}
