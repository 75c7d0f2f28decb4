// Replication end to end in one process: a leader (a real Broker and
// Server on 127.0.0.1, broker/testing/broker_fixture.h) whose partition
// the test makes led by node 1 with replicas and ISR {1, 2}, and a follower
// (node 2): a Partition over its own log, fetched by a
// ReplicaFetcherManager on an event loop of its own, fsyncs on a thread
// pool. Every wait has a deadline.
#include <catch2/catch.hpp>

#include <fstream>
#include <future>
#include <iterator>
#include <thread>

#include "broker/testing/broker_fixture.h"
#include "broker/testing/kafka_client.h"
#include "protocol/error_codes.h"
#include "protocol/messages/00_produce.h"
#include "protocol/messages/01_fetch.h"
#include "protocol/messages/19_create_topics.h"
#include "replication/fetcher_options.h"
#include "replication/replica_fetcher.h"
#include "storage/partition_metadata.h"
#include "storage/test_util.h"

using namespace runnel;
using namespace runnel::replication;
using broker::testing::BrokerFixture;
using broker::testing::KafkaClient;
namespace p = runnel::protocol;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTopic = "replicated";
constexpr auto kBound = std::chrono::seconds(20);
const PartitionState kReplicated{NodeId(1), LeaderEpoch(1), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}};

template <typename F>
bool eventually(F condition, std::chrono::milliseconds bound = kBound) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

void create_topic(KafkaClient& client, int32_t partitions = 1) {
  p::CreateTopicsRequest req;
  auto& t = req.topics.emplace_back();
  t.name = kTopic;
  t.num_partitions = partitions;
  t.replication_factor = 1;
  auto resp = client.call<p::CreateTopicsApi>(req, 7);
  REQUIRE(resp.topics.size() == 1);
  REQUIRE(resp.topics[0].error_code == p::code(p::ErrorCode::none));
}

int16_t produce(KafkaClient& client, storage::testing::Bytes batch, int32_t timeout_ms = 30000, int16_t acks = -1,
                int32_t partition = 0) {
  p::ProduceRequest req;
  req.acks = acks;
  req.timeout_ms = timeout_ms;
  auto& t = req.topic_data.emplace_back();
  t.name = kTopic;
  auto& part = t.partition_data.emplace_back();
  part.index = partition;
  part.records = p::Records::view(p::ByteView(batch.data(), batch.size()));
  auto resp = client.call<p::ProduceApi>(req, 11);
  REQUIRE(resp.responses.size() == 1);
  REQUIRE(resp.responses[0].partition_responses.size() == 1);
  return resp.responses[0].partition_responses[0].error_code;
}

std::shared_ptr<Partition> leader_partition(BrokerFixture& leader, int32_t partition = 0) {
  return leader.on_loop(
      [partition](broker::Broker& b) { return b.replica_manager().get_partition(kTopic, PartitionId(partition)); });
}

// The leader's partition as the metadata would make it: node 1 leads in
// epoch 1 with node 2 as a follower in the ISR.
void replicate_to_node_2(BrokerFixture& leader, int32_t partition = 0) {
  REQUIRE(leader.on_loop([partition](broker::Broker& b) {
    return b.replica_manager().become_leader_or_follower(kTopic, PartitionId(partition), kReplicated);
  }));
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The segment files of a partition dir, by name.
std::map<std::string, std::string> segment_files(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto ext = e.path().extension();
    if (ext == ".log" || ext == ".index" || ext == ".timeindex")
      out[e.path().filename().string()] = file_bytes(e.path());
  }
  return out;
}

// Node 2: a follower partition over its own log, with a fetcher manager
// on its own event loop.
struct Follower {
  storage::testing::TempDir dir;
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  asio::thread_pool blocking{1};
  std::vector<std::shared_ptr<storage::Log>> logs;
  std::vector<std::shared_ptr<Partition>> partitions;
  std::shared_ptr<storage::Log> log;      // partition 0's
  std::shared_ptr<Partition> partition;  // partition 0
  std::unique_ptr<ReplicaFetcherManager> manager;
  std::thread loop;
  std::atomic<int> syncs{0};

  Follower(uint16_t leader_port, const storage::LogConfig& config, std::optional<p::Uuid> topic_id,
           bool fsync_before_ack = false, std::chrono::milliseconds max_wait = std::chrono::milliseconds(100),
           int partition_count = 1, int32_t num_fetchers = 1) {
    for (int i = 0; i < partition_count; ++i) {
      storage::LogOptions options;
      options.topic_id = topic_id;
      auto opened = storage::Log::open(dir.path / (std::string(kTopic) + "-" + std::to_string(i)), config, options);
      REQUIRE(opened);
      logs.push_back(std::move(*opened));
      partitions.push_back(std::make_shared<Partition>(kTopic, PartitionId(i), logs.back(), NodeId(2)));
      partitions.back()->become_leader_or_follower(kReplicated);
    }
    log = logs.front();
    partition = partitions.front();
    FetcherOptions fo;
    fo.num_fetchers = num_fetchers;
    fo.self = NodeId(2);
    fo.max_wait = max_wait;
    fo.backoff = std::chrono::milliseconds(50);
    fo.socket_timeout = std::chrono::seconds(10);
    fo.fsync_before_ack = fsync_before_ack;
    auto resolve = [leader_port](NodeId n) -> std::optional<std::pair<std::string, uint16_t>> {
      if (n != NodeId(1)) return std::nullopt;
      return std::pair<std::string, uint16_t>{"127.0.0.1", leader_port};
    };
    auto run_blocking = [this](std::function<std::error_code()> fn) -> awaitable<std::error_code> {
      ++syncs;
      // The call is a coroutine's parameter, so it lives in the coroutine's frame.
      auto on_pool = [](std::function<std::error_code()> call) -> awaitable<std::error_code> { co_return call(); };
      auto task = on_pool(std::move(fn));
      co_return co_await asio::co_spawn(blocking, std::move(task), asio::use_awaitable);
    };
    manager = std::make_unique<ReplicaFetcherManager>(io.get_executor(), fo, resolve, [] { return int64_t{7}; },
                                                      run_blocking);
    loop = std::thread([this] { io.run(); });
  }

  ~Follower() { stop(); }

  template <typename F>
  auto on_loop(F fn) {
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<F>()>>(std::move(fn));
    auto result = task->get_future();
    asio::post(io, [task] { (*task)(); });
    REQUIRE(result.wait_for(kBound) == std::future_status::ready);
    return result.get();
  }

  void start(LeaderEpoch epoch = LeaderEpoch(1)) {
    on_loop([this, epoch] {
      for (const auto& p : partitions) manager->add_partition(p, NodeId(1), epoch);
    });
  }
  void stop_fetching() {
    if (loop.joinable()) on_loop([this] { manager->shutdown(); });
  }
  void stop() {
    if (!loop.joinable()) return;
    stop_fetching();
    work.reset();
    // The fetchers end on their next turn of the loop: shutdown is bounded.
    auto done = std::async(std::launch::async, [this] { loop.join(); });
    REQUIRE(done.wait_for(kBound) == std::future_status::ready);
    blocking.join();
    for (const auto& l : logs) (void)l->close();
  }
};

bool caught_up(Partition& leader, Follower& f) {
  return f.log->log_end_offset() == leader.log_end_offset().value() &&
         f.log->high_watermark() == leader.high_watermark().value() &&
         leader.high_watermark() == leader.log_end_offset();
}

}  // namespace

TEST_CASE("a follower fetches the leader's records into byte-identical segment files", "[replication][fetcher]") {
  // Small segments and a dense index: the follower must roll and index where the leader did.
  auto leader = std::make_unique<BrokerFixture>(
      std::map<std::string, std::string>{{"log.segment.bytes", "1024"}, {"log.index.interval.bytes", "100"}});
  KafkaClient client(leader->port());
  create_topic(client);
  replicate_to_node_2(*leader);
  auto lp = leader_partition(*leader);
  const auto topic_id = leader->on_loop([](broker::Broker& b) { return b.topics().find(kTopic)->id; });
  // With the topic id the fetcher speaks Fetch v15 (ReplicaState), without it v12.
  const bool by_id = GENERATE(true, false);
  const bool fsync = GENERATE(false, true);
  Follower f(leader->port(), lp->log().config(), by_id ? std::optional(topic_id) : std::nullopt, fsync);
  REQUIRE(static_cast<bool>(storage::read_partition_metadata(f.log->dir())) == by_id);
  f.start();

  int64_t records = 0;
  for (int i = 0; i < 12; ++i) {
    REQUIRE(produce(client, storage::testing::batch_of(3 + i % 4, 100 + i)) == 0);
    records += 3 + i % 4;
  }
  REQUIRE(lp->log_end_offset() == Offset(records));
  REQUIRE(lp->log().segment_count() >= 3);
  REQUIRE(eventually([&] { return caught_up(*lp, f); }));
  CHECK(f.log->leader_epochs() == lp->log().leader_epochs());
  if (fsync) CHECK(f.syncs > 0);
  else CHECK(f.syncs == 0);

  f.stop();
  const fs::path leader_dir = leader->log_dir() / (std::string(kTopic) + "-0");
  leader->stop();  // closes its logs: the active segment's index files are trimmed, as the follower's
  auto ours = segment_files(f.dir.path / (std::string(kTopic) + "-0"));
  auto theirs = segment_files(leader_dir);
  REQUIRE(ours.size() >= 9);  // three files a segment
  CHECK(ours == theirs);
}

TEST_CASE("an acks=all produce completes once the follower has fetched, and times out without it",
          "[replication][fetcher]") {
  BrokerFixture leader;
  KafkaClient client(leader.port());
  create_topic(client);
  replicate_to_node_2(leader);
  auto lp = leader_partition(leader);
  Follower f(leader.port(), lp->log().config(), std::nullopt, /*fsync_before_ack=*/true);

  // No follower yet: the high watermark stays, the produce times out.
  CHECK(produce(client, storage::testing::batch_of(2, 1), 300) == p::code(p::ErrorCode::request_timed_out));
  CHECK(lp->high_watermark() == Offset(0));

  f.start();
  CHECK(produce(client, storage::testing::batch_of(2, 2)) == 0);
  // Acknowledged: the follower has it (on disk, with fsync before ack).
  CHECK(lp->high_watermark() == Offset(4));
  CHECK(f.log->log_end_offset() >= 4);
  CHECK(f.log->recovery_point() >= 4);

  f.stop_fetching();
  CHECK(produce(client, storage::testing::batch_of(2, 3), 300) == p::code(p::ErrorCode::request_timed_out));
  CHECK(lp->high_watermark() == Offset(4));
  CHECK(lp->log_end_offset() == Offset(6));
}

TEST_CASE("a follower with batches of an older epoch the leader lacks truncates to the epoch boundary",
          "[replication][fetcher]") {
  auto leader = std::make_unique<BrokerFixture>();
  KafkaClient client(leader->port());
  create_topic(client);
  auto lp = leader_partition(*leader);
  // Epoch 0, one node: offsets 0-2 are committed on the leader.
  auto first = storage::testing::batch_of(3, 1);
  REQUIRE(produce(client, first) == 0);

  // The follower has the same batch and two more of epoch 0 that never
  // reached the leader (written, say, while it led before).
  Follower f(leader->port(), lp->log().config(), std::nullopt);
  REQUIRE(f.log->append(std::span<uint8_t>(first.data(), first.size()), 0));
  for (uint64_t tag : {50, 51}) {
    auto extra = storage::testing::batch_of(2, tag);
    REQUIRE(f.log->append(std::span<uint8_t>(extra.data(), extra.size()), 0));
  }
  REQUIRE(f.log->log_end_offset() == 7);

  // Node 1 leads in epoch 1 from offset 3 and takes new records.
  replicate_to_node_2(*leader);
  REQUIRE(lp->log().leader_epochs().back() == storage::EpochEntry{1, 3});
  auto next = storage::testing::batch_of(4, 2);
  REQUIRE(produce(client, next, 30000, /*acks=*/1) == 0);
  f.start();
  REQUIRE(eventually([&] { return caught_up(*lp, f); }));
  CHECK(f.log->log_end_offset() == 7);  // 3 of epoch 0, then the leader's 4 of epoch 1
  CHECK(f.log->leader_epochs() == std::vector<storage::EpochEntry>{{0, 0}, {1, 3}});

  f.stop();
  const fs::path leader_dir = leader->log_dir() / (std::string(kTopic) + "-0");
  leader->stop();
  CHECK(segment_files(f.dir.path / (std::string(kTopic) + "-0")) == segment_files(leader_dir));
}

namespace {

p::FetchResponse replica_fetch(KafkaClient& client, int32_t replica, int32_t current_epoch, int64_t offset,
                               int32_t last_fetched_epoch = -1) {
  p::FetchRequest req;
  req.replica_id = replica;
  req.max_wait_ms = 0;
  req.min_bytes = 1;
  auto& t = req.topics.emplace_back();
  t.topic = kTopic;
  auto& part = t.partitions.emplace_back();
  part.partition = 0;
  part.current_leader_epoch = current_epoch;
  part.fetch_offset = offset;
  part.last_fetched_epoch = last_fetched_epoch;
  part.partition_max_bytes = 1 << 20;
  auto resp = client.call<p::FetchApi>(req, 12);
  REQUIRE(resp.responses.size() == 1);
  REQUIRE(resp.responses[0].partitions.size() == 1);
  return resp;
}

}  // namespace

TEST_CASE("the leader answers replica fetches as Kafka's Partition.fetchRecords", "[replication][fetcher]") {
  BrokerFixture leader;
  KafkaClient client(leader.port());
  create_topic(client);
  replicate_to_node_2(leader);
  auto lp = leader_partition(leader);
  REQUIRE(produce(client, storage::testing::batch_of(2, 1), 30000, /*acks=*/1) == 0);
  REQUIRE(produce(client, storage::testing::batch_of(3, 2), 30000, /*acks=*/1) == 0);
  REQUIRE(lp->high_watermark() == Offset(0));

  SECTION("a broker that is not a replica") {
    // Kafka's followerReplicaOrThrow: with a current leader epoch the
    // replica may be unknown yet (UNKNOWN_LEADER_EPOCH), without one NOT_LEADER_OR_FOLLOWER.
    auto with_epoch = replica_fetch(client, 3, 1, 0).responses[0].partitions[0];
    CHECK(with_epoch.error_code == p::code(p::ErrorCode::unknown_leader_epoch));
    CHECK(with_epoch.records.size() == 0);
    auto without = replica_fetch(client, 3, -1, 0).responses[0].partitions[0];
    CHECK(without.error_code == p::code(p::ErrorCode::not_leader_or_follower));
    CHECK(lp->high_watermark() == Offset(0));
  }
  SECTION("a replica reads to the log end, and its fetch offset moves the high watermark") {
    auto first = replica_fetch(client, 2, 1, 0, 1).responses[0].partitions[0];
    CHECK(first.error_code == 0);
    CHECK(first.records.size() > 0);  // past the high watermark: a replica reads to the log end
    CHECK(first.high_watermark == 0);
    CHECK(lp->high_watermark() == Offset(0));  // fetched at 0: nothing is on the follower yet
    auto second = replica_fetch(client, 2, 1, 2, 1).responses[0].partitions[0];
    CHECK(second.error_code == 0);
    CHECK(lp->high_watermark() == Offset(2));
    auto third = replica_fetch(client, 2, 1, 5, 1).responses[0].partitions[0];
    CHECK(third.error_code == 0);
    CHECK(third.records.size() == 0);
    // The offsets are taken before the fetch offset counts (Kafka's
    // readRecords): the follower learns the new high watermark next time.
    CHECK(third.high_watermark == 2);
    CHECK(lp->high_watermark() == Offset(5));
  }
  SECTION("a fenced or unknown epoch") {
    CHECK(replica_fetch(client, 2, 0, 0).responses[0].partitions[0].error_code ==
          p::code(p::ErrorCode::fenced_leader_epoch));
    CHECK(replica_fetch(client, 2, 2, 0).responses[0].partitions[0].error_code ==
          p::code(p::ErrorCode::unknown_leader_epoch));
  }
  SECTION("a last fetched epoch the leader ends elsewhere: DivergingEpoch, no records") {
    // The leader's epoch 1 holds offsets 0-4; a follower claiming epoch 1 up to 7 diverges at 5.
    auto d = replica_fetch(client, 2, 1, 7, 1).responses[0].partitions[0];
    CHECK(d.error_code == 0);
    CHECK(d.diverging_epoch.epoch == 1);
    CHECK(d.diverging_epoch.end_offset == 5);
    CHECK(d.records.size() == 0);
    CHECK(lp->high_watermark() == Offset(0));  // a diverging fetch says nothing of the follower's log
  }
}

TEST_CASE("a follower behind the leader's log start starts over there (out of range)", "[replication][fetcher]") {
  BrokerFixture leader;
  KafkaClient client(leader.port());
  create_topic(client);
  auto lp = leader_partition(leader);
  REQUIRE(produce(client, storage::testing::batch_of(3, 1)) == 0);
  REQUIRE(produce(client, storage::testing::batch_of(3, 2)) == 0);
  // The leader's log now starts inside its second batch (DeleteRecords).
  REQUIRE(leader.on_loop([&](broker::Broker&) { auto r = lp->log().delete_records(4);
            return r ? *r : int64_t{-1}; }) == 4);
  replicate_to_node_2(leader);

  Follower f(leader.port(), lp->log().config(), std::nullopt);
  f.start();
  REQUIRE(eventually([&] { return caught_up(*lp, f); }));
  CHECK(f.log->log_start_offset() == 4);
  CHECK(f.log->log_end_offset() == 6);
  CHECK(f.log->segment_base_offsets() == std::vector<int64_t>{3});  // from the leader's batch holding 4
}

TEST_CASE("shutdown ends a fetch waiting in the leader's long poll", "[replication][fetcher]") {
  BrokerFixture leader;
  KafkaClient client(leader.port());
  create_topic(client);
  replicate_to_node_2(leader);
  auto lp = leader_partition(leader);
  Follower f(leader.port(), lp->log().config(), std::nullopt, false, std::chrono::seconds(60));
  f.start();
  // Nothing to fetch: the follower's Fetch waits in the leader's purgatory.
  REQUIRE(eventually([&] {
    return leader.on_loop([](broker::Broker& b) { return b.replica_manager().fetch_purgatory().waiting(); }) == 1;
  }));
  const auto started = std::chrono::steady_clock::now();
  f.stop();
  CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
  CHECK(f.manager->fetcher_count() == 0);
}

TEST_CASE("the fetcher's settings come from Kafka's replica.* keys and runnel.acks.all.fsync",
          "[replication][fetcher]") {
  storage::testing::TempDir dir;
  auto defaults = fetcher_options(
      broker::BrokerConfig::from({{"node.id", "2"}, {"log.dirs", dir.path.string()}}), NodeId(2));
  CHECK(defaults.self == NodeId(2));
  CHECK(defaults.max_bytes == 1048576);
  CHECK(defaults.min_bytes == 1);
  CHECK(defaults.response_max_bytes == 10485760);
  CHECK(defaults.max_wait == std::chrono::milliseconds(500));
  CHECK(defaults.backoff == std::chrono::milliseconds(1000));
  CHECK(defaults.socket_timeout == std::chrono::milliseconds(30000));
  CHECK(defaults.num_fetchers == 1);
  CHECK(defaults.fsync_before_ack);
  auto set = fetcher_options(broker::BrokerConfig::from({{"node.id", "3"},
                                                         {"log.dirs", dir.path.string()},
                                                         {"num.replica.fetchers", "4"},
                                                         {"replica.fetch.wait.max.ms", "50"},
                                                         {"runnel.acks.all.fsync", "false"}}),
                             NodeId(3));
  CHECK(set.num_fetchers == 4);
  CHECK(set.max_wait == std::chrono::milliseconds(50));
  CHECK_FALSE(set.fsync_before_ack);
}

TEST_CASE("partitions spread over num.replica.fetchers fetchers, one request each for their partitions",
          "[replication][fetcher]") {
  constexpr int kPartitions = 4;
  BrokerFixture leader;
  KafkaClient client(leader.port());
  create_topic(client, kPartitions);
  std::vector<std::shared_ptr<Partition>> lps;
  for (int i = 0; i < kPartitions; ++i) {
    replicate_to_node_2(leader, i);
    lps.push_back(leader_partition(leader, i));
  }
  Follower f(leader.port(), lps[0]->log().config(), std::nullopt, false, std::chrono::milliseconds(100), kPartitions,
             /*num_fetchers=*/2);
  f.start();
  CHECK(f.on_loop([&] { return f.manager->partition_count(); }) == kPartitions);
  const size_t fetchers = f.on_loop([&] { return f.manager->fetcher_count(); });
  CHECK(fetchers >= 1);
  CHECK(fetchers <= 2);
  for (int i = 0; i < kPartitions; ++i)
    REQUIRE(produce(client, storage::testing::batch_of(2 + i, static_cast<uint64_t>(i)), 30000, -1, i) == 0);
  REQUIRE(eventually([&] {
    for (int i = 0; i < kPartitions; ++i)
      if (f.logs[static_cast<size_t>(i)]->log_end_offset() != 2 + i || lps[static_cast<size_t>(i)]->high_watermark() != Offset(2 + i))
        return false;
    return true;
  }));

  // A partition no longer followed stops; its leader's acks=all produce waits.
  f.on_loop([&] { f.manager->remove_partition(kTopic, PartitionId(3)); });
  CHECK(f.on_loop([&] { return f.manager->partition_count(); }) == kPartitions - 1);
  CHECK(produce(client, storage::testing::batch_of(1, 9), 300, -1, 3) == p::code(p::ErrorCode::request_timed_out));
  CHECK(produce(client, storage::testing::batch_of(1, 9), 30000, -1, 0) == 0);
  CHECK(f.logs[3]->log_end_offset() == 5);
}

TEST_CASE("a follower in an older epoch than the leader's waits for the metadata, then fetches",
          "[replication][fetcher]") {
  BrokerFixture leader;
  KafkaClient client(leader.port());
  create_topic(client);
  replicate_to_node_2(leader);
  auto lp = leader_partition(leader);
  REQUIRE(produce(client, storage::testing::batch_of(2, 1), 30000, /*acks=*/1) == 0);
  Follower f(leader.port(), lp->log().config(), std::nullopt);
  f.partition->become_leader_or_follower({NodeId(1), LeaderEpoch(0), {NodeId(1), NodeId(2)}, {NodeId(1), NodeId(2)}});
  f.start(LeaderEpoch(0));  // the leader is in epoch 1: FENCED_LEADER_EPOCH
  // Fenced, the partition stays out of every request (the leader never
  // sees its log end, so the high watermark stays).
  CHECK(produce(client, storage::testing::batch_of(1, 2), 500) == p::code(p::ErrorCode::request_timed_out));
  CHECK(f.log->log_end_offset() == 0);
  // The metadata catches up: epoch 1.
  f.on_loop([&] { f.partition->become_leader_or_follower(kReplicated); });
  f.start(LeaderEpoch(1));
  REQUIRE(eventually([&] { return caught_up(*lp, f); }));
  CHECK(f.log->log_end_offset() == 3);
}
