// ReplicaManager::delete_records: after the leader's deletion a
// DeleteRecords waits in the delete-records purgatory until the low
// watermark (the live replicas' smallest log start offset, as their
// fetches report it) reaches the requested offset; it times out with
// REQUEST_TIMED_OUT, and a deposed leader answers NOT_LEADER_OR_FOLLOWER.
#include <catch2/catch.hpp>

#include <set>

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

const PartitionState kThreeReplicas{NodeId(1), LeaderEpoch(0), {NodeId(1), NodeId(2), NodeId(3)},
                                    {NodeId(1), NodeId(2), NodeId(3)}};
constexpr bool kWithFollowers = true;

struct Fixture {
  TempDir dir;
  broker::BrokerConfig config = broker::BrokerConfig::from({{"node.id", "1"}, {"log.dirs", dir.path.string()}});
  broker::testing::HostedTopics node{config};
  asio::io_context& io = node.io;
  ReplicaManager& replicas = node.replicas;
  std::set<NodeId> dead;
  std::vector<DeleteRecordsEntry> entries;
  bool done = false;

  // One replica, or three led here; either way ten records committed.
  explicit Fixture(bool three_replicas = false) {
    node.create("t", 1);
    if (three_replicas) REQUIRE(replicas.become_leader_or_follower("t", PartitionId(0), kThreeReplicas));
    append_ten();
  }
  std::shared_ptr<Partition> partition() { return replicas.get_partition("t", PartitionId(0)); }

  // Ten records, and (with followers) every follower's fetch at their end
  // from log start 0, so the high watermark is 10.
  void append_ten() {
    Bytes batch = batch_of(10, 9);
    REQUIRE(partition()->append_records_as_leader(client_append(batch, 1)).ok());
    for (NodeId f : partition()->replicas())
      if (f != NodeId(1)) partition()->update_follower_fetch_state(f, Offset(10), Offset(0));
    REQUIRE(partition()->high_watermark() == Offset(10));
  }
  // What the handler does: the leader's deletion, then the wait.
  void delete_records(int64_t offset, std::chrono::milliseconds timeout) {
    auto moved = partition()->log().delete_records(offset);
    REQUIRE(moved);
    entries = {{partition(), Offset(offset), Offset(*moved)}};
    asio::co_spawn(io, run(*this, timeout), asio::detached);
    poll();
  }
  // Built outside the coroutine: GCC 12 mishandles lambdas built inside one.
  IsLiveBroker is_live() {
    return [this](NodeId n) { return !dead.contains(n); };
  }
  static broker::awaitable<void> run(Fixture& f, std::chrono::milliseconds timeout) {
    IsLiveBroker is_live = f.is_live();
    co_await f.replicas.delete_records(timeout, f.entries, std::move(is_live));
    f.done = true;
  }
  void poll() {
    io.restart();
    io.poll();
  }
  void run_until_done() {
    for (int i = 0; i < 2000 && !done; ++i) {  // at most 20 s
      io.restart();
      io.run_for(10ms);
    }
  }
};

}  // namespace

TEST_CASE("one broker: DeleteRecords answers the new log start at once even with timeout 0",
          "[replication][delete_records]") {
  Fixture f;
  f.delete_records(6, 0ms);
  REQUIRE(f.done);
  CHECK(f.entries[0].error == ErrorCode::none);
  CHECK(f.entries[0].low_watermark == Offset(6));
  CHECK(f.replicas.delete_records_purgatory().waiting() == 0);
}

TEST_CASE("DeleteRecords waits until every live follower reports the new log start",
          "[replication][delete_records]") {
  Fixture f(kWithFollowers);
  f.delete_records(6, 1h);
  REQUIRE_FALSE(f.done);
  REQUIRE(f.partition()->delete_records_watchers().size() == 1);
  CHECK(f.entries[0].low_watermark == Offset(0));  // the followers' log starts, so far

  f.partition()->update_follower_fetch_state(NodeId(2), Offset(10), Offset(6));
  f.poll();
  REQUIRE_FALSE(f.done);  // node 3 is still at 0
  f.partition()->update_follower_fetch_state(NodeId(3), Offset(10), Offset(6));
  f.run_until_done();
  REQUIRE(f.done);
  CHECK(f.entries[0].error == ErrorCode::none);
  CHECK(f.entries[0].low_watermark == Offset(6));
  CHECK(f.replicas.delete_records_purgatory().waiting() == 0);
  CHECK(f.partition()->delete_records_watchers().size() == 0);
}

TEST_CASE("a follower on a broker that is not live does not hold DeleteRecords", "[replication][delete_records]") {
  Fixture f(kWithFollowers);
  f.dead.insert(NodeId(3));
  f.delete_records(6, 1h);
  REQUIRE_FALSE(f.done);
  f.partition()->update_follower_fetch_state(NodeId(2), Offset(10), Offset(6));
  f.run_until_done();
  REQUIRE(f.done);
  CHECK(f.entries[0].error == ErrorCode::none);
  CHECK(f.entries[0].low_watermark == Offset(6));
}

TEST_CASE("DeleteRecords times out with REQUEST_TIMED_OUT and the low watermark of the deletion",
          "[replication][delete_records]") {
  Fixture f(kWithFollowers);
  f.delete_records(6, 50ms);
  f.partition()->update_follower_fetch_state(NodeId(2), Offset(10), Offset(6));
  f.run_until_done();
  REQUIRE(f.done);
  CHECK(f.entries[0].error == ErrorCode::request_timed_out);
  CHECK(f.entries[0].low_watermark == Offset(0));
  CHECK(f.partition()->log_start_offset() == Offset(6));  // the leader's deletion stands
  CHECK(f.replicas.delete_records_purgatory().waiting() == 0);
}

TEST_CASE("timeout 0 with a follower behind times out at once as Kafka's", "[replication][delete_records]") {
  Fixture f(kWithFollowers);
  f.delete_records(6, 0ms);
  f.run_until_done();
  REQUIRE(f.done);
  CHECK(f.entries[0].error == ErrorCode::request_timed_out);
}

TEST_CASE("a leader deposed while DeleteRecords waits answers NOT_LEADER_OR_FOLLOWER",
          "[replication][delete_records]") {
  Fixture f(kWithFollowers);
  f.delete_records(6, 1h);
  REQUIRE_FALSE(f.done);
  PartitionState led_by_2 = kThreeReplicas;
  led_by_2.leader = NodeId(2);
  led_by_2.leader_epoch = LeaderEpoch(1);
  REQUIRE(f.replicas.become_leader_or_follower("t", PartitionId(0), led_by_2));
  f.partition()->try_complete_delayed_requests();  // as the metadata's change does (hosted_partitions)
  f.run_until_done();
  REQUIRE(f.done);
  CHECK(f.entries[0].error == ErrorCode::not_leader_or_follower);
  CHECK(f.entries[0].low_watermark == kUnknownOffset);
}
