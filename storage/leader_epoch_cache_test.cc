#include <catch2/catch.hpp>

#include "storage/leader_epoch_cache.h"
#include "storage/log_config.h"
#include "storage/test_util.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

TEST_CASE("leader epoch cache keeps epochs and offsets monotonic, as Kafka's does", "[storage]") {
  TempDir tmp;
  auto cache = LeaderEpochCache::load(tmp.path);
  REQUIRE(cache);
  REQUIRE_FALSE(cache->latest_epoch());
  REQUIRE_FALSE(cache->assign(2, 10));
  REQUIRE_FALSE(cache->assign(2, 15));  // same epoch, later offset: no change
  REQUIRE_FALSE(cache->assign(4, 30));
  REQUIRE_FALSE(cache->assign(5, 50));
  REQUIRE(cache->entries() == std::vector<EpochEntry>{{2, 10}, {4, 30}, {5, 50}});
  REQUIRE(*read_leader_epoch_checkpoint(tmp.path / kLeaderEpochCheckpointFile) == cache->entries());
  REQUIRE(cache->epoch_for_offset(9) == std::nullopt);
  REQUIRE(cache->epoch_for_offset(10) == 2);
  REQUIRE(cache->epoch_for_offset(49) == 4);
  REQUIRE(cache->epoch_for_offset(1000) == 5);
  REQUIRE(cache->end_offset_for(5, 77) == std::pair<int32_t, int64_t>{5, 77});
  REQUIRE(cache->end_offset_for(3, 77) == std::pair<int32_t, int64_t>{2, 30});
  REQUIRE(cache->end_offset_for(1, 77) == std::pair<int32_t, int64_t>{1, 10});
  REQUIRE(cache->end_offset_for(9, 77) == std::pair<int32_t, int64_t>{-1, -1});
  // A new entry contradicting later ones replaces them.
  REQUIRE_FALSE(cache->assign(6, 40));
  REQUIRE(cache->entries() == std::vector<EpochEntry>{{2, 10}, {4, 30}, {6, 40}});
  REQUIRE_FALSE(cache->truncate_from_end(40));
  REQUIRE(cache->entries() == std::vector<EpochEntry>{{2, 10}, {4, 30}});
  REQUIRE_FALSE(cache->truncate_from_start(35));
  REQUIRE(cache->entries() == std::vector<EpochEntry>{{4, 35}});
  REQUIRE(LeaderEpochCache::load(tmp.path)->entries() == std::vector<EpochEntry>{{4, 35}});
  REQUIRE_THROWS_AS((void)cache->assign(-1, 0), std::logic_error);
}
