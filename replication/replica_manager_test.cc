// ReplicaManager::append_records: an acks=all produce waits in the produce
// purgatory until the high watermark passes its records, and fails with
// REQUEST_TIMED_OUT when the ISR does not get them in time.
#include <catch2/catch.hpp>

#include "broker/testing/hosted_topics.h"
#include "replication/replica_manager.h"
#include "replication/test_partition.h"

using namespace runnel;
using namespace runnel::replication;
using namespace runnel::replication::testing;
using namespace runnel::storage::testing;
using namespace std::chrono_literals;
using protocol::ErrorCode;
namespace asio = broker::asio;

namespace {

struct Fixture {
  TempDir dir;
  broker::BrokerConfig config = broker::BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  broker::testing::HostedTopics node{config};
  asio::io_context& io = node.io;
  ReplicaManager& replicas = node.replicas;
  Bytes batch = batch_of(3, 9);
  std::vector<AppendEntry> entries;
  bool done = false;

  Fixture() { node.create("t", 1); }
  std::shared_ptr<Partition> partition() { return replicas.get_partition("t", PartitionId(0)); }

  void produce(int16_t acks, std::chrono::milliseconds timeout) {
    entries.resize(1);
    entries[0].partition = partition();
    entries[0].request = client_append(batch);
    asio::co_spawn(io, run(*this, acks, timeout), asio::detached);
    io.restart();
    io.poll();
  }
  static broker::awaitable<void> run(Fixture& f, int16_t acks, std::chrono::milliseconds timeout) {
    co_await f.replicas.append_records(acks, timeout, f.entries);
    f.done = true;
  }
  void run_until_done() {
    for (int i = 0; i < 2000 && !done; ++i) {  // at most 20 s
      io.restart();
      io.run_for(10ms);
    }
  }
};

PartitionState with_follower() { return {NodeId(1), LeaderEpoch(0), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}}; }

}  // namespace

TEST_CASE("one broker: acks=all completes at the append, through the purgatory's first check", "[replication][delayed_produce]") {
  Fixture f;
  f.produce(-1, 1h);
  REQUIRE(f.done);
  REQUIRE(f.entries[0].result.ok());
  REQUIRE(f.entries[0].result.base_offset == Offset(0));
  REQUIRE(f.partition()->high_watermark() == Offset(3));
  REQUIRE(f.replicas.produce_purgatory().waiting() == 0);
}

TEST_CASE("acks=all waits until the ISR's fetch moves the high watermark past the records", "[replication][delayed_produce]") {
  Fixture f;
  REQUIRE(f.replicas.become_leader_or_follower("t", PartitionId(0), with_follower()));
  f.produce(-1, 1h);
  REQUIRE_FALSE(f.done);
  REQUIRE(f.replicas.produce_purgatory().waiting() == 1);
  REQUIRE(f.partition()->produce_watchers().size() == 1);

  f.partition()->update_follower_fetch_state(NodeId(2), Offset(2), Offset(0));  // not all of them yet
  f.io.restart();
  f.io.poll();
  REQUIRE_FALSE(f.done);
  f.partition()->update_follower_fetch_state(NodeId(2), Offset(3), Offset(0));
  f.run_until_done();
  REQUIRE(f.done);
  REQUIRE(f.entries[0].result.ok());
  REQUIRE(f.entries[0].result.base_offset == Offset(0));
  REQUIRE(f.replicas.produce_purgatory().waiting() == 0);
  REQUIRE(f.partition()->produce_watchers().size() == 0);
}

TEST_CASE("acks=all fails with REQUEST_TIMED_OUT when the ISR does not catch up in time", "[replication][delayed_produce]") {
  Fixture f;
  REQUIRE(f.replicas.become_leader_or_follower("t", PartitionId(0), with_follower()));
  f.produce(-1, 50ms);
  REQUIRE_FALSE(f.done);
  f.run_until_done();
  REQUIRE(f.done);
  REQUIRE(f.entries[0].result.status.code == ErrorCode::request_timed_out);
  REQUIRE(f.entries[0].result.base_offset == Offset(0));  // appended, not committed: Kafka keeps the offset
  REQUIRE(f.replicas.produce_purgatory().waiting() == 0);
}

TEST_CASE("acks=1 answers at the append without waiting for the ISR", "[replication][delayed_produce]") {
  Fixture f;
  REQUIRE(f.replicas.become_leader_or_follower("t", PartitionId(0), with_follower()));
  f.produce(1, 1h);
  REQUIRE(f.done);
  REQUIRE(f.entries[0].result.ok());
  REQUIRE(f.partition()->high_watermark() == Offset(0));
  REQUIRE(f.replicas.produce_purgatory().waiting() == 0);
}
