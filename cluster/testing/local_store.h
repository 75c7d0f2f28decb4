// Test fixture: a single-node metadata store over a fresh temporary log
// dir, with its event loop and blocking pool.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>
#include <memory>

#include "cluster/local_metadata_store.h"
#include "storage/test_util.h"

namespace runnel::cluster::testing {

struct LocalStore {
  storage::testing::TempDir dir;
  boost::asio::io_context io;
  boost::asio::thread_pool pool{1};
  std::unique_ptr<LocalMetadataStore> store;

  LocalStore() {
    store = std::make_unique<LocalMetadataStore>(io.get_executor(), pool.get_executor(), dir.path, NodeId(1));
    REQUIRE_FALSE(store->open());
  }
  ~LocalStore() {
    store.reset();
    pool.join();
  }
};

}  // namespace runnel::cluster::testing
