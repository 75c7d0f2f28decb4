// The etcd store against a real etcd started by each test (label
// `cluster`): the same contract as the local store, plus failover.
#include "cluster/etcd/etcd_metadata_store.h"

#include <catch2/catch.hpp>
#include <set>

#include "cluster/errors.h"
#include "cluster/etcd/key_layout.h"
#include "cluster/producer_id_allocator.h"
#include "cluster/testing/etcd_process.h"
#include "cluster/testing/run.h"

using namespace runnel;
using namespace runnel::cluster;
using namespace runnel::cluster::etcd;
using runnel::cluster::testing::EtcdProcess;
using runnel::cluster::testing::run;
using runnel::cluster::testing::run_until;

namespace {

constexpr auto kTimeout = std::chrono::seconds(3);

std::unique_ptr<EtcdMetadataStore> store_on(boost::asio::io_context& io, const std::string& endpoints,
                                            const std::string& cluster = "test-cluster") {
  auto eps = parse_endpoints(endpoints);
  REQUIRE(eps);
  return std::make_unique<EtcdMetadataStore>(io.get_executor(), *eps, keys::root(cluster), kTimeout);
}

}  // namespace

TEST_CASE("etcd: endpoints parse as etcdctl writes them", "[etcd]") {
  auto eps = parse_endpoints("http://127.0.0.1:2379,http://etcd-2:12379/");
  REQUIRE(eps);
  REQUIRE(eps->size() == 2);
  REQUIRE((*eps)[1].host == "etcd-2");
  REQUIRE((*eps)[1].port == "12379");
  REQUIRE_FALSE(parse_endpoints("127.0.0.1:2379"));
  REQUIRE_FALSE(parse_endpoints("http://nohost"));
  REQUIRE_FALSE(parse_endpoints(""));
}

TEST_CASE("etcd: put, get, range and delete under the cluster's root", "[etcd]") {
  EtcdProcess etcd;
  boost::asio::io_context io;
  auto s = store_on(io, etcd.endpoint());
  auto other = store_on(io, etcd.endpoint(), "other-cluster");

  auto r1 = run(io, s->put("topics/a", R"({"name":"a"})"));
  REQUIRE(r1);
  auto r2 = run(io, s->put("topics/b", std::string("\x00\xff binary", 9)));
  REQUIRE(r2);
  REQUIRE(*r2 > *r1);
  REQUIRE(run(io, s->put(keys::kProducerIds, "1000")));
  REQUIRE(run(io, other->put("topics/z", "{}")));

  auto a = run(io, s->get("topics/a"));
  REQUIRE(a);
  REQUIRE(*a);
  REQUIRE((*a)->key == "topics/a");
  REQUIRE((*a)->value == R"({"name":"a"})");
  REQUIRE((*a)->mod_revision == *r1);
  REQUIRE((*a)->create_revision == *r1);
  REQUIRE((*run(io, s->get("topics/b")))->value == std::string("\x00\xff binary", 9));
  REQUIRE_FALSE(*run(io, s->get("topics/none")));

  auto topics = run(io, s->range(keys::kTopicsPrefix));
  REQUIRE(topics);
  REQUIRE(topics->kvs.size() == 2);  // not producer_ids, not the other cluster's
  REQUIRE(topics->kvs[0].key == "topics/a");
  REQUIRE(topics->kvs[1].key == "topics/b");
  REQUIRE(topics->revision >= *r2);
  REQUIRE(run(io, s->range(""))->kvs.size() == 3);

  REQUIRE(run(io, s->erase("topics/a")));
  REQUIRE_FALSE(*run(io, s->get("topics/a")));
}

TEST_CASE("etcd: compare-and-swap conflicts and all-or-nothing transactions", "[etcd]") {
  EtcdProcess etcd;
  boost::asio::io_context io;
  auto s = store_on(io, etcd.endpoint());

  auto first = run(io, s->compare_and_swap("controller", kAbsent, std::string("1")));
  REQUIRE(first);
  REQUIRE(first->succeeded);
  auto lost = run(io, s->compare_and_swap("controller", kAbsent, std::string("2")));
  REQUIRE(lost);
  REQUIRE_FALSE(lost->succeeded);
  REQUIRE(lost->current.size() == 1);
  REQUIRE(lost->current[0].value == "1");
  REQUIRE(lost->current[0].mod_revision == first->revision);
  REQUIRE_FALSE(run(io, s->compare_and_swap("controller", first->revision - 1, std::string("3")))->succeeded);
  auto swapped = run(io, s->compare_and_swap("controller", first->revision, std::string("4")));
  REQUIRE(swapped->succeeded);
  REQUIRE((*run(io, s->get("controller")))->value == "4");
  // Conditional delete.
  REQUIRE_FALSE(run(io, s->compare_and_swap("controller", first->revision, std::nullopt))->succeeded);
  REQUIRE(run(io, s->compare_and_swap("controller", swapped->revision, std::nullopt))->succeeded);
  REQUIRE_FALSE(*run(io, s->get("controller")));

  auto a = *run(io, s->put("topics/a", "1"));
  Txn txn;
  txn.compares = {{"topics/a", a}, {"topics/b", a}};  // topics/b is absent: fails
  txn.ops = {Op::put("topics/a", "2"), Op::put("topics/b", "2")};
  auto failed = run(io, s->commit(txn));
  REQUIRE(failed);
  REQUIRE_FALSE(failed->succeeded);
  REQUIRE(failed->current.size() == 1);
  REQUIRE((*run(io, s->get("topics/a")))->value == "1");
  REQUIRE_FALSE(*run(io, s->get("topics/b")));
  txn.compares = {{"topics/a", a}, {"topics/b", kAbsent}};
  auto done = run(io, s->commit(txn));
  REQUIRE(done->succeeded);
  REQUIRE((*run(io, s->get("topics/a")))->mod_revision == done->revision);
  REQUIRE((*run(io, s->get("topics/b")))->mod_revision == done->revision);
}

TEST_CASE("etcd: watches hear puts and deletes in order, also from a past revision", "[etcd]") {
  EtcdProcess etcd;
  boost::asio::io_context io;
  auto s = store_on(io, etcd.endpoint());
  const Revision before = *run(io, s->put(keys::kProducerIds, "0"));

  std::vector<WatchEvent> seen;
  auto w = s->watch(keys::kTopicsPrefix, before + 1, [&](std::error_code ec, const std::vector<WatchEvent>& e) {
    REQUIRE_FALSE(ec);
    seen.insert(seen.end(), e.begin(), e.end());
  });
  const Revision r1 = *run(io, s->put("topics/a", "1"));
  REQUIRE(run(io, s->put(keys::kProducerIds, "1000")));  // not under topics/
  REQUIRE(run(io, s->erase("topics/a")));
  REQUIRE(run_until(io, [&] { return seen.size() >= 2; }, std::chrono::seconds(10)));
  REQUIRE(seen.size() == 2);
  REQUIRE(seen[0].kind == WatchEvent::Kind::put);
  REQUIRE(seen[0].kv.key == "topics/a");
  REQUIRE(seen[0].kv.value == "1");
  REQUIRE(seen[0].kv.mod_revision == r1);
  REQUIRE(seen[1].kind == WatchEvent::Kind::erase);
  REQUIRE(seen[1].kv.key == "topics/a");

  // From the past: the history first.
  std::vector<WatchEvent> replayed;
  auto from_past = s->watch(keys::kTopicsPrefix, r1, [&](std::error_code, const std::vector<WatchEvent>& e) {
    replayed.insert(replayed.end(), e.begin(), e.end());
  });
  REQUIRE(run_until(io, [&] { return replayed.size() >= 2; }, std::chrono::seconds(10)));
  REQUIRE(replayed[0].kv.mod_revision == r1);

  // Ended with its handle.
  w.reset();
  REQUIRE(run(io, s->put("topics/c", "1")));
  REQUIRE(run_until(io, [&] { return replayed.size() >= 3; }, std::chrono::seconds(10)));
  REQUIRE(seen.size() == 2);
}

TEST_CASE("etcd: a key bound to a lease is deleted when the lease expires or is revoked", "[etcd]") {
  EtcdProcess etcd;
  boost::asio::io_context io;
  auto s = store_on(io, etcd.endpoint());
  std::vector<WatchEvent> seen;
  auto w = s->watch(keys::kBrokersPrefix, 0, [&](std::error_code, const std::vector<WatchEvent>& e) {
    seen.insert(seen.end(), e.begin(), e.end());
  });

  auto lease = run(io, s->grant_lease(std::chrono::seconds(2)));
  REQUIRE(lease);
  REQUIRE(run(io, s->put(keys::broker(NodeId(1)), R"({"host":"127.0.0.1"})", *lease)));
  REQUIRE((*run(io, s->get(keys::broker(NodeId(1)))))->lease == *lease);
  auto ttl = run(io, s->keep_alive(*lease));
  REQUIRE(ttl);
  REQUIRE(ttl->count() >= 2);
  // Left alone: gone within its ttl (plus etcd's lease checking interval).
  REQUIRE(run_until(io, [&] { return seen.size() == 2; }, std::chrono::seconds(15)));
  REQUIRE(seen[1].kind == WatchEvent::Kind::erase);
  REQUIRE(seen[1].kv.key == "brokers/1");
  REQUIRE_FALSE(*run(io, s->get(keys::broker(NodeId(1)))));
  REQUIRE(run(io, s->keep_alive(*lease)).error() == make_error_code(ClusterErrc::lease_not_found));

  auto second = *run(io, s->grant_lease(std::chrono::seconds(60)));
  REQUIRE(run(io, s->put(keys::broker(NodeId(2)), "{}", second)));
  REQUIRE_FALSE(run(io, s->revoke_lease(second)));
  REQUIRE_FALSE(*run(io, s->get(keys::broker(NodeId(2)))));
  REQUIRE(run(io, s->revoke_lease(second)) == make_error_code(ClusterErrc::lease_not_found));
  REQUIRE(run(io, s->put(keys::broker(NodeId(2)), "{}", second)).error());
}

TEST_CASE("etcd: a dead first endpoint fails over to the next, for calls and watches", "[etcd]") {
  EtcdProcess etcd;
  boost::asio::io_context io;
  const uint16_t dead = cluster::testing::free_port();
  auto s = store_on(io, "http://127.0.0.1:" + std::to_string(dead) + "," + etcd.endpoint());
  REQUIRE(s->client().current() == 0);
  auto r = run(io, s->put("topics/a", "1"));
  REQUIRE(r);
  REQUIRE(s->client().current() == 1);
  REQUIRE((*run(io, s->get("topics/a")))->value == "1");

  auto fresh = store_on(io, "http://127.0.0.1:" + std::to_string(dead) + "," + etcd.endpoint());
  std::vector<WatchEvent> seen;
  auto w = fresh->watch(keys::kTopicsPrefix, *r, [&](std::error_code, const std::vector<WatchEvent>& e) {
    seen.insert(seen.end(), e.begin(), e.end());
  });
  REQUIRE(run_until(io, [&] { return seen.size() == 1; }, std::chrono::seconds(10)));

  // Every endpoint dead: unavailable, within the timeout per endpoint.
  etcd.stop();
  const auto start = std::chrono::steady_clock::now();
  auto down = run(io, s->get("topics/a"));
  REQUIRE(down.error() == make_error_code(ClusterErrc::unavailable));
  REQUIRE(std::chrono::steady_clock::now() - start < 2 * kTimeout + std::chrono::seconds(1));
}

TEST_CASE("etcd: two brokers' producer-id allocators never hand out the same id", "[etcd]") {
  EtcdProcess etcd;
  boost::asio::io_context io;
  auto one = store_on(io, etcd.endpoint());
  auto two = store_on(io, etcd.endpoint());
  ProducerIdAllocator a(*one), b(*two);
  REQUIRE_FALSE(run(io, a.load()));
  REQUIRE_FALSE(run(io, b.load()));
  std::set<int64_t> seen;
  for (int i = 0; i < 1200; ++i) {
    REQUIRE(seen.insert(*run(io, a.next())).second);
    REQUIRE(seen.insert(*run(io, b.next())).second);
  }
  REQUIRE((*run(io, one->get(keys::kProducerIds)))->value == "4000");
}
