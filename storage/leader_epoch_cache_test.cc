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

TEST_CASE("log config reads Kafka's topic config names and rejects bad values", "[storage]") {
  auto c = LogConfig::from_properties({{"segment.bytes", "1048576"},
                                       {"retention.ms", "-1"},
                                       {"cleanup.policy", "compact,delete"},
                                       {"message.timestamp.type", "LogAppendTime"},
                                       {"min.cleanable.dirty.ratio", "0.25"},
                                       {"preallocate", "true"}});
  REQUIRE(c);
  REQUIRE(c->segment_bytes == 1048576);
  REQUIRE(c->retention_ms == -1);
  REQUIRE(c->cleanup_compact);
  REQUIRE(c->cleanup_delete);
  REQUIRE(c->message_timestamp_type == TimestampType::log_append_time);
  REQUIRE(c->min_cleanable_dirty_ratio == 0.25);
  REQUIRE(c->preallocate);
  REQUIRE(c->get("cleanup.policy") == "compact,delete");
  REQUIRE(c->get("segment.ms") == "604800000");
  REQUIRE(LogConfig().get("flush.messages") == "9223372036854775807");
  REQUIRE(LogConfig().get("segment.index.bytes") == "10485760");
  REQUIRE(LogConfig().get("index.interval.bytes") == "4096");
  REQUIRE(LogConfig::from_properties({{"segment.bytes", "13"}}).error() == StorageErrc::invalid_config);
  REQUIRE(LogConfig::from_properties({{"retention.ms", "-2"}}).error() == StorageErrc::invalid_config);
  REQUIRE(LogConfig::from_properties({{"cleanup.policy", "shred"}}).error() == StorageErrc::invalid_config);
  REQUIRE(LogConfig::from_properties({{"no.such.config", "1"}}).error() == StorageErrc::invalid_config);
  REQUIRE(LogConfig::names().size() == 17);
}
