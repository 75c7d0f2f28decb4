// Producer-id blocks claimed by compare-and-swap: durable before use,
// continued after a restart, never shared by two allocators.
#include "cluster/producer_id_allocator.h"

#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>
#include <set>

#include "cluster/etcd/key_layout.h"
#include "cluster/local_metadata_store.h"
#include "cluster/testing/run.h"
#include "storage/test_util.h"

using namespace runnel;
using namespace runnel::cluster;
using runnel::cluster::testing::run;
using runnel::storage::testing::TempDir;

TEST_CASE("producer ids: a block is on disk before its ids are used, and a restart continues after it",
          "[producer_id_allocator]") {
  TempDir dir;
  boost::asio::io_context io;
  boost::asio::thread_pool pool(1);
  {
    LocalMetadataStore store(io.get_executor(), pool.get_executor(), dir.path, NodeId(1));
    REQUIRE_FALSE(store.open());
    ProducerIdAllocator ids(store);
    REQUIRE_FALSE(run(io, ids.load()));
    REQUIRE(*run(io, ids.next()) == 0);
    REQUIRE(*storage::read_whole_file(dir.path / "runnel-producer-ids") == "1000\n");
    for (int i = 1; i < 1000; ++i) REQUIRE(*run(io, ids.next()) == i);
    REQUIRE(*run(io, ids.next()) == 1000);
    REQUIRE(*storage::read_whole_file(dir.path / "runnel-producer-ids") == "2000\n");
  }
  LocalMetadataStore store(io.get_executor(), pool.get_executor(), dir.path, NodeId(1));
  REQUIRE_FALSE(store.open());
  ProducerIdAllocator ids(store);
  REQUIRE_FALSE(run(io, ids.load()));
  REQUIRE(*run(io, ids.next()) == 2000);
  pool.join();
}

TEST_CASE("producer ids: two allocators on one store never hand out the same id", "[producer_id_allocator]") {
  TempDir dir;
  boost::asio::io_context io;
  boost::asio::thread_pool pool(1);
  LocalMetadataStore store(io.get_executor(), pool.get_executor(), dir.path, NodeId(1));
  REQUIRE_FALSE(store.open());
  ProducerIdAllocator a(store), b(store);
  REQUIRE_FALSE(run(io, a.load()));
  REQUIRE_FALSE(run(io, b.load()));  // both saw no block: b's first claim loses and retries
  std::set<int64_t> seen;
  for (int i = 0; i < 2500; ++i) {
    REQUIRE(seen.insert(*run(io, a.next())).second);
    REQUIRE(seen.insert(*run(io, b.next())).second);
  }
  REQUIRE(*storage::read_whole_file(dir.path / "runnel-producer-ids") == "6000\n");
  pool.join();
}

TEST_CASE("producer ids: a key that is not a number fails the load", "[producer_id_allocator]") {
  TempDir dir;
  REQUIRE_FALSE(storage::write_file_atomically(dir.path / "runnel-producer-ids", "12x\n"));
  boost::asio::io_context io;
  boost::asio::thread_pool pool(1);
  LocalMetadataStore store(io.get_executor(), pool.get_executor(), dir.path, NodeId(1));
  REQUIRE_FALSE(store.open());
  ProducerIdAllocator ids(store);
  REQUIRE(run(io, ids.load()));
  pool.join();
}
