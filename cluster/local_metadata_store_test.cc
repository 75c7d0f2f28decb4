// The single-node store: compare-and-swap, watches and leases, and today's
// three files read and written byte for byte as before the store, and the ACLs file.
#include "cluster/local_metadata_store.h"

#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>

#include "cluster/errors.h"
#include "cluster/etcd/key_layout.h"
#include "cluster/testing/run.h"
#include "storage/test_util.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::run;
using runnel::cluster::testing::run_until;
using runnel::storage::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// Today's files as the broker wrote them before the store.
const std::string kTopics =
    R"({"version":1,"topics":[{"name":"orders","id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":3,"configs":{"cleanup.policy":"compact"}}]})"
    "\n";
const std::string kConfigs = R"({"broker":{"log.retention.ms":"1000"},"cluster_default":{}})"
                             "\n";
const std::string kProducerIds = "2000\n";

void write(const fs::path& p, const std::string& text) { REQUIRE_FALSE(storage::write_file_atomically(p, text)); }
std::string read(const fs::path& p) { return *storage::read_whole_file(p); }

struct Fixture {
  TempDir dir;
  boost::asio::io_context io;
  boost::asio::thread_pool pool{2};
  std::unique_ptr<LocalMetadataStore> store;

  void open() {
    store = std::make_unique<LocalMetadataStore>(io.get_executor(), pool.get_executor(), dir.path, NodeId(1));
    REQUIRE_FALSE(store->open());
  }
  ~Fixture() {
    store.reset();
    pool.join();
  }
};

}  // namespace

TEST_CASE("local store: compare-and-swap conflicts", "[local_metadata_store]") {
  Fixture f;
  f.open();
  auto& s = *f.store;
  auto first = run(f.io, s.compare_and_swap("topics/a", kAbsent, std::string(R"({"name":"a"})")));
  REQUIRE(first);
  REQUIRE(first->succeeded);
  const Revision rev = first->revision;

  // Absent expected, but it exists now: refused, and told what is there.
  auto again = run(f.io, s.compare_and_swap("topics/a", kAbsent, std::string(R"({"name":"b"})")));
  REQUIRE(again);
  REQUIRE_FALSE(again->succeeded);
  REQUIRE(again->current.size() == 1);
  REQUIRE(again->current[0].mod_revision == rev);
  REQUIRE(again->current[0].value == R"({"name":"a"})");

  // A stale revision is refused; the current one wins.
  REQUIRE_FALSE(run(f.io, s.compare_and_swap("topics/a", rev - 1, std::string("{}")))->succeeded);
  auto swapped = run(f.io, s.compare_and_swap("topics/a", rev, std::string(R"({"name":"a","v":2})")));
  REQUIRE(swapped->succeeded);
  REQUIRE(swapped->revision > rev);
  auto got = run(f.io, s.get("topics/a"));
  REQUIRE(got);
  REQUIRE((*got)->value == R"({"name":"a","v":2})");
  REQUIRE((*got)->create_revision == rev);
  REQUIRE((*got)->mod_revision == swapped->revision);

  // A transaction whose one compare fails writes none of its ops.
  Txn txn;
  txn.compares = {{"topics/a", swapped->revision}, {"topics/b", rev}};
  txn.ops = {Op::put("topics/a", "{}"), Op::put("topics/b", "{}")};
  REQUIRE_FALSE(run(f.io, s.commit(txn))->succeeded);
  REQUIRE((*run(f.io, s.get("topics/a")))->value == R"({"name":"a","v":2})");
  REQUIRE_FALSE(*run(f.io, s.get("topics/b")));

  // Two claims of the same revision racing: exactly one wins.
  std::optional<Result<TxnResult>> one, two;
  runnel::cluster::testing::spawn(f.io, s.compare_and_swap(keys::kProducerIds, kAbsent, std::string("1000")), one);
  runnel::cluster::testing::spawn(f.io, s.compare_and_swap(keys::kProducerIds, kAbsent, std::string("1000")), two);
  REQUIRE(run_until(f.io, [&] { return one && two; }, std::chrono::seconds(10)));
  REQUIRE((*one)->succeeded != (*two)->succeeded);

  // A value a file cannot hold is refused before anything changes.
  REQUIRE_FALSE(run(f.io, s.put("topics/c", "not json")));
  REQUIRE_FALSE(*run(f.io, s.get("topics/c")));
}

TEST_CASE("local store: an existing data dir loads, and is rewritten in today's formats", "[local_metadata_store]") {
  Fixture f;
  write(f.dir.path / "runnel-topics.json", kTopics);
  write(f.dir.path / "runnel-broker-configs.json", kConfigs);
  write(f.dir.path / "runnel-producer-ids", kProducerIds);
  f.open();
  auto& s = *f.store;

  auto topics = run(f.io, s.range(keys::kTopicsPrefix));
  REQUIRE(topics);
  REQUIRE(topics->kvs.size() == 1);
  REQUIRE(topics->kvs[0].key == "topics/orders");
  REQUIRE(topics->kvs[0].value ==
          R"({"name":"orders","id":"AAAAAAAAAAAAAAAAAAAAAQ","partitions":3,"configs":{"cleanup.policy":"compact"}})");
  REQUIRE((*run(f.io, s.get(keys::broker_config(NodeId(1)))))->value == R"({"log.retention.ms":"1000"})");
  REQUIRE((*run(f.io, s.get(keys::cluster_default_config())))->value == "{}");
  REQUIRE((*run(f.io, s.get(keys::kProducerIds)))->value == "2000");
  // Another broker's configs are not this data dir's.
  REQUIRE_FALSE(*run(f.io, s.get(keys::broker_config(NodeId(2)))));

  // Rewriting the same values gives back the same bytes.
  REQUIRE(run(f.io, s.put("topics/orders", topics->kvs[0].value)));
  REQUIRE(read(f.dir.path / "runnel-topics.json") == kTopics);
  REQUIRE(run(f.io, s.put(keys::kProducerIds, "2000")));
  REQUIRE(read(f.dir.path / "runnel-producer-ids") == kProducerIds);
  REQUIRE(run(f.io, s.erase(keys::cluster_default_config())));
  REQUIRE(read(f.dir.path / "runnel-broker-configs.json") == kConfigs);

  // New values survive a restart; keys no file holds do not.
  REQUIRE(run(f.io, s.put("topics/audit", R"({"name":"audit","id":"AAAAAAAAAAAAAAAAAAAAAg","partitions":1,"configs":{}})")));
  REQUIRE(run(f.io, s.erase("topics/orders")));
  REQUIRE(run(f.io, s.put(keys::cluster_default_config(), R"({"compression.type":"zstd"})")));
  REQUIRE(run(f.io, s.put("scratch", "gone after restart")));
  REQUIRE(read(f.dir.path / "runnel-topics.json") ==
          R"({"version":1,"topics":[{"name":"audit","id":"AAAAAAAAAAAAAAAAAAAAAg","partitions":1,"configs":{}}]})"
          "\n");
  f.open();
  auto reloaded = run(f.io, f.store->range(keys::kTopicsPrefix));
  REQUIRE(reloaded->kvs.size() == 1);
  REQUIRE(reloaded->kvs[0].key == "topics/audit");
  REQUIRE((*run(f.io, f.store->get(keys::cluster_default_config())))->value == R"({"compression.type":"zstd"})");
  REQUIRE((*run(f.io, f.store->get(keys::broker_config(NodeId(1)))))->value == R"({"log.retention.ms":"1000"})");
  REQUIRE_FALSE(*run(f.io, f.store->get("scratch")));
}

TEST_CASE("local store: a corrupt topics file fails the open, corrupt configs are skipped", "[local_metadata_store]") {
  Fixture f;
  write(f.dir.path / "runnel-broker-configs.json", "{not json");
  LocalMetadataStore configs(f.io.get_executor(), f.pool.get_executor(), f.dir.path, NodeId(1));
  REQUIRE_FALSE(configs.open());
  REQUIRE(configs.warnings().size() == 1);
  write(f.dir.path / "runnel-topics.json", "{\"version\":1,\"topi");
  LocalMetadataStore topics(f.io.get_executor(), f.pool.get_executor(), f.dir.path, NodeId(1));
  REQUIRE(topics.open() == make_error_code(ClusterErrc::corrupt_file));
}

TEST_CASE("local store: watches hear each change of their prefix, in revision order", "[local_metadata_store]") {
  Fixture f;
  f.open();
  auto& s = *f.store;
  std::vector<WatchEvent> seen;
  auto w = s.watch(keys::kTopicsPrefix, 0, [&](std::error_code ec, const std::vector<WatchEvent>& events) {
    REQUIRE_FALSE(ec);
    seen.insert(seen.end(), events.begin(), events.end());
  });
  auto r1 = *run(f.io, s.put("topics/a", "{}"));
  (void)*run(f.io, s.put(keys::kProducerIds, "1000"));  // another prefix: not heard
  Txn txn;
  txn.ops = {Op::put("topics/b", R"({"x":1})"), Op::erase("topics/a")};
  auto r2 = run(f.io, s.commit(txn))->revision;
  REQUIRE(seen.size() == 3);
  REQUIRE(seen[0].kind == WatchEvent::Kind::put);
  REQUIRE(seen[0].kv.key == "topics/a");
  REQUIRE(seen[0].kv.mod_revision == r1);
  REQUIRE(seen[1].kv.key == "topics/b");
  REQUIRE(seen[1].kv.value == R"({"x":1})");
  REQUIRE(seen[2].kind == WatchEvent::Kind::erase);
  REQUIRE(seen[2].kv.key == "topics/a");
  REQUIRE(seen[1].kv.mod_revision == r2);
  REQUIRE(seen[2].kv.mod_revision == r2);

  // A watch from a past revision hears the history first.
  std::vector<WatchEvent> replayed;
  auto from_past = s.watch(keys::kTopicsPrefix, r1 + 1, [&](std::error_code, const std::vector<WatchEvent>& events) {
    replayed.insert(replayed.end(), events.begin(), events.end());
  });
  REQUIRE(replayed.size() == 2);
  REQUIRE(replayed[0].kv.key == "topics/b");

  // Gone with its handle.
  w.reset();
  (void)*run(f.io, s.put("topics/c", "{}"));
  REQUIRE(seen.size() == 3);
  REQUIRE(replayed.size() == 3);
}

TEST_CASE("local store: a watch from before what was loaded is told the history is gone", "[local_metadata_store]") {
  Fixture f;
  write(f.dir.path / "runnel-topics.json", kTopics);
  f.open();
  std::error_code error;
  auto w = f.store->watch(keys::kTopicsPrefix, 1, [&](std::error_code ec, const std::vector<WatchEvent>&) { error = ec; });
  REQUIRE(error == make_error_code(ClusterErrc::compacted));
}

TEST_CASE("local store: a leased key dies with its lease and never reaches a file", "[local_metadata_store]") {
  Fixture f;
  f.open();
  auto& s = *f.store;
  std::vector<WatchEvent> seen;
  auto w = s.watch("", 0, [&](std::error_code, const std::vector<WatchEvent>& e) { seen.insert(seen.end(), e.begin(), e.end()); });

  auto lease = run(f.io, s.grant_lease(std::chrono::seconds(1)));
  REQUIRE(lease);
  REQUIRE(run(f.io, s.put("brokers/1", "{}", *lease)));
  REQUIRE(run(f.io, s.put("topics/ephemeral", "{}", *lease)));
  REQUIRE_FALSE(fs::exists(f.dir.path / "runnel-topics.json"));
  // Kept alive past its ttl, it stays.
  for (int i = 0; i < 3; ++i) {
    REQUIRE_FALSE(run_until(f.io, [] { return false; }, std::chrono::milliseconds(400)));
    REQUIRE(run(f.io, s.keep_alive(*lease)));
  }
  REQUIRE(*run(f.io, s.get("brokers/1")));
  // Left alone, it expires and its keys are deleted.
  REQUIRE(run_until(f.io, [&] { return seen.size() == 4; }, std::chrono::seconds(5)));
  REQUIRE(seen[2].kind == WatchEvent::Kind::erase);
  REQUIRE_FALSE(*run(f.io, s.get("brokers/1")));
  REQUIRE(run(f.io, s.keep_alive(*lease)).error() == make_error_code(ClusterErrc::lease_not_found));
  REQUIRE(run(f.io, s.put("brokers/1", "{}", *lease)).error() == make_error_code(ClusterErrc::lease_not_found));

  // Revoked: at once.
  auto second = *run(f.io, s.grant_lease(std::chrono::seconds(60)));
  REQUIRE(run(f.io, s.put("brokers/2", "{}", second)));
  REQUIRE_FALSE(run(f.io, s.revoke_lease(second)));
  REQUIRE_FALSE(*run(f.io, s.get("brokers/2")));
}

TEST_CASE("local store: racing writes of one file leave the newest contents on disk", "[local_metadata_store]") {
  Fixture f;
  f.open();
  auto& s = *f.store;
  // Two puts whose writes run on the pool at once, and a put_now (the
  // synchronous path) while they are in flight: whichever write finishes
  // last, the file holds all three topics.
  std::optional<Result<Revision>> a, b;
  runnel::cluster::testing::spawn(f.io, s.put("topics/a", R"({"name":"a"})"), a);
  runnel::cluster::testing::spawn(f.io, s.put("topics/b", R"({"name":"b"})"), b);
  f.io.poll();  // both applied and their writes posted
  REQUIRE(s.put_now("topics/c", R"({"name":"c"})"));
  REQUIRE(run_until(f.io, [&] { return a && b; }, std::chrono::seconds(10)));
  REQUIRE(*a);
  REQUIRE(*b);
  REQUIRE(read(f.dir.path / "runnel-topics.json") ==
          R"({"version":1,"topics":[{"name":"a"},{"name":"b"},{"name":"c"}]})"
          "\n");
  REQUIRE(s.put_now("topics/d", "not json").error() == std::make_error_code(std::errc::invalid_argument));
}

TEST_CASE("local store: the ACLs key lives in runnel-acls.json and loads again", "[local_metadata_store]") {
  Fixture f;
  f.open();
  const std::string acls = R"({"version":1,"acls":[]})";
  auto put = run(f.io, f.store->compare_and_swap(keys::kAcls, kAbsent, acls));
  REQUIRE(put);
  REQUIRE(put->succeeded);
  REQUIRE(read(f.dir.path / "runnel-acls.json") == acls + "\n");
  f.open();
  auto kv = run(f.io, f.store->get(keys::kAcls));
  REQUIRE(kv);
  REQUIRE(*kv);
  REQUIRE((*kv)->value == acls);
  // A damaged file stops the open: the ACLs decide who may do what.
  write(f.dir.path / "runnel-acls.json", "{not json");
  f.store = std::make_unique<LocalMetadataStore>(f.io.get_executor(), f.pool.get_executor(), f.dir.path, NodeId(1));
  REQUIRE(f.store->open() == make_error_code(ClusterErrc::corrupt_file));
}
