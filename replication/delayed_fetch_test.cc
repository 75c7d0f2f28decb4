// fetch_messages: when a Fetch waits, what wakes it, and that a wait leaves
// nothing on the partition once it is over (issue 12, defect 16: every idle
// long poll used to stay on its partition until the next append).
#include <catch2/catch.hpp>

#include "replication/delayed_fetch.h"
#include "storage/test_util.h"

using namespace runnel::broker;
using namespace runnel::replication;
using runnel::LeaderEpoch;
using runnel::NodeId;
using runnel::Offset;
using runnel::PartitionId;
using namespace runnel::storage::testing;
using namespace std::chrono_literals;
using runnel::protocol::ErrorCode;
namespace storage = runnel::storage;
using PartitionData = runnel::protocol::FetchResponse::FetchableTopicResponse::PartitionData;

namespace {

struct Fixture {
  TempDir dir;
  FakeClock clock;
  asio::io_context io;
  DelayedOperations purgatory{io.get_executor()};
  std::shared_ptr<storage::Log> log;
  std::shared_ptr<Partition> partition;

  Fixture() {
    auto opened = storage::Log::open(dir.path / "t-0", storage::LogConfig{}, options_with(clock));
    REQUIRE(opened);
    log = std::move(*opened);
    partition = std::make_shared<Partition>("t", PartitionId(0), log, NodeId(1));
    partition->become_leader_or_follower(PartitionState::single_node(NodeId(1)));
  }

  // One Fetch of this partition, run on the fixture's loop.
  struct Fetch {
    PartitionData out;
    std::vector<FetchPartition> partitions;
    bool done = false;
  };
  std::unique_ptr<Fetch> spawn(int64_t offset, std::chrono::milliseconds max_wait, int32_t epoch = -1,
                               bool with_unhosted = false) {
    auto f = std::make_unique<Fetch>();
    std::optional<LeaderEpoch> current;
    if (epoch >= 0) current = LeaderEpoch(epoch);
    f->partitions.push_back({partition, &f->out, Offset(offset), 1 << 20, current});
    if (with_unhosted) f->partitions.push_back({nullptr, &f->out, Offset(0), 1 << 20, std::nullopt});
    asio::co_spawn(io, run(*f, purgatory, max_wait), asio::detached);
    return f;
  }
  void poll() {
    io.restart();
    io.poll();  // the spawned fetches read, and wait if they should
  }
  std::unique_ptr<Fetch> start(int64_t offset, std::chrono::milliseconds max_wait, int32_t epoch = -1,
                               bool with_unhosted = false) {
    auto f = spawn(offset, max_wait, epoch, with_unhosted);
    poll();
    return f;
  }
  static awaitable<void> run(Fetch& f, DelayedOperations& purgatory, std::chrono::milliseconds max_wait) {
    co_await fetch_messages(purgatory, f.partitions, {.min_bytes = 1, .max_bytes = 1 << 20, .max_wait = max_wait});
    f.done = true;
  }
  void run_until(const std::function<bool()>& done) {
    for (int i = 0; i < 3000 && !done(); ++i) {  // at most 30 s
      io.restart();
      io.run_for(10ms);
    }
  }
};

}  // namespace

TEST_CASE("idle long polls leave nothing on the partition once their wait is over", "[delayed_fetch]") {
  Fixture f;
  std::vector<std::unique_ptr<Fixture::Fetch>> fetches;
  // A wait far longer than the polls that start them take on a loaded machine.
  for (int i = 0; i < 2000; ++i) fetches.push_back(f.spawn(0, 3s));
  f.poll();
  REQUIRE(f.partition->fetch_watchers().size() == 2000);
  REQUIRE(f.purgatory.waiting() == 2000);

  f.run_until([&] { return f.purgatory.waiting() == 0 && fetches.back()->done; });
  for (auto& fetch : fetches) {
    REQUIRE(fetch->done);
    REQUIRE(fetch->out.error_code == 0);
    REQUIRE(fetch->out.records.size() == 0);
  }
  REQUIRE(f.partition->fetch_watchers().size() == 0);
  REQUIRE(f.purgatory.waiting() == 0);
}

TEST_CASE("an append completes a waiting fetch with the new data", "[delayed_fetch]") {
  Fixture f;
  auto fetch = f.start(0, 1h);
  REQUIRE_FALSE(fetch->done);
  REQUIRE(f.partition->fetch_watchers().size() == 1);

  REQUIRE(f.partition->fetch_watchers().check_and_complete() == 0);  // nothing new: still waiting
  REQUIRE(append(*f.log, batch_of(3, 1)));
  REQUIRE(f.partition->fetch_watchers().check_and_complete() == 1);
  f.run_until([&] { return fetch->done; });
  REQUIRE(fetch->done);
  REQUIRE(fetch->out.error_code == 0);
  REQUIRE(fetch->out.high_watermark == 3);
  REQUIRE(fetch->out.records.size() > 0);
  REQUIRE(f.partition->fetch_watchers().size() == 0);
}

TEST_CASE("a fetch with a partition in error answers without waiting", "[delayed_fetch]") {
  Fixture f;
  SECTION("offset out of range") {
    auto fetch = f.start(5, 1h);
    REQUIRE(fetch->done);
    REQUIRE(fetch->out.error_code == runnel::protocol::code(ErrorCode::offset_out_of_range));
  }
  SECTION("a partition not hosted here, beside an idle one") {
    auto fetch = f.start(0, 1h, -1, /*with_unhosted=*/true);
    REQUIRE(fetch->done);
  }
  SECTION("a leader epoch newer than the partition's") {
    auto fetch = f.start(0, 1h, 3);
    REQUIRE(fetch->done);
    REQUIRE(fetch->out.error_code == runnel::protocol::code(ErrorCode::unknown_leader_epoch));
  }
  REQUIRE(f.partition->fetch_watchers().size() == 0);
  REQUIRE(f.purgatory.waiting() == 0);
}

TEST_CASE("a partition deleted while a fetch waits answers UNKNOWN_TOPIC_OR_PARTITION at once", "[delayed_fetch]") {
  Fixture f;
  auto fetch = f.start(0, 1h);
  REQUIRE_FALSE(fetch->done);
  REQUIRE_FALSE(f.log->close());  // what LogManager::remove does first
  REQUIRE(f.partition->fetch_watchers().check_and_complete() == 1);
  f.run_until([&] { return fetch->done; });
  REQUIRE(fetch->done);
  REQUIRE(fetch->out.error_code == runnel::protocol::code(ErrorCode::unknown_topic_or_partition));
}

TEST_CASE("expiring the purgatory answers every waiting fetch (shutdown)", "[delayed_fetch]") {
  Fixture f;
  auto a = f.start(0, 1h);
  auto b = f.start(0, 1h);
  f.purgatory.expire_all();
  f.run_until([&] { return a->done && b->done; });
  REQUIRE(a->done);
  REQUIRE(b->done);
  REQUIRE(f.partition->fetch_watchers().size() == 0);
}

// Kafka expands the ISR where a follower's fetch updates its state, before
// the fetch waits: a caught-up follower's long poll must not delay its
// return to the ISR by replica.fetch.wait.max.ms.
TEST_CASE("after_read sees a caught-up follower's state before its fetch waits", "[delayed_fetch]") {
  Fixture f;
  f.partition->become_leader_or_follower({NodeId(1), LeaderEpoch(0), {NodeId(1), NodeId(2)}, {NodeId(1)}});
  PartitionData out;
  std::vector<FetchPartition> partitions{{f.partition, &out, Offset(0), 1 << 20, std::nullopt}};
  int calls = 0;
  bool caught_up_then = false, waiting_after = false, done = false;
  std::function<void()> after_read = [&] {
    ++calls;
    caught_up_then = f.partition->is_caught_up_for_isr(NodeId(2));
  };
  FetchParams params{.min_bytes = 1, .max_bytes = 1 << 20, .max_wait = 1h};
  params.replica = ReplicaFetch{NodeId(2)};
  auto run = [](DelayedOperations& purgatory, std::vector<FetchPartition>& parts, FetchParams p,
                std::function<void()> cb, bool& finished) -> awaitable<void> {
    co_await fetch_messages(purgatory, parts, p, std::move(cb));
    finished = true;
  };
  asio::co_spawn(f.io, run(f.purgatory, partitions, params, after_read, done), asio::detached);
  f.poll();
  waiting_after = f.purgatory.waiting() == 1;

  REQUIRE(calls == 1);
  REQUIRE(caught_up_then);  // fetched from the log end: in sync, while the fetch still waits
  REQUIRE(waiting_after);
  REQUIRE_FALSE(done);
  f.purgatory.expire_all();
  f.run_until([&] { return done; });
  REQUIRE(done);
  REQUIRE(calls == 1);  // not again at the end of the wait
}
