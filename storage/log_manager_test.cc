#include <catch2/catch.hpp>

#include "storage/log_manager.h"
#include "storage/partition_metadata.h"
#include "storage/test_util.h"
#include "storage/uuid_text.h"

using namespace runnel::storage;
using namespace runnel::storage::testing;

namespace {

LogManagerOptions options(const std::vector<fs::path>& dirs, const FakeClock& clock) {
  LogManagerOptions o;
  o.log_dirs = dirs;
  o.clock = clock.clock();
  o.cluster_id = "MkU3OEVBNTcwNTJENDM2Qk";
  o.node_id = 1;
  o.default_config.segment_bytes = 1024;
  o.default_config.retention_ms = -1;
  o.default_config.file_delete_delay_ms = 1000;
  o.retention_check_interval_ms = 300000;
  return o;
}

std::string text_of(const fs::path& p) { return *read_whole_file(p); }

}  // namespace

TEST_CASE("log manager formats its dirs and refuses another cluster's", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0";
  {
    auto m = LogManager::open(options({dir}, clock));
    REQUIRE(m);
  }
  auto meta = read_meta_properties(dir);
  REQUIRE(meta);
  REQUIRE(meta->cluster_id == "MkU3OEVBNTcwNTJENDM2Qk");
  REQUIRE(meta->node_id == 1);
  REQUIRE_FALSE(meta->directory_id.is_zero());
  auto other = options({dir}, clock);
  other.cluster_id = "another-cluster-id0000";
  REQUIRE(LogManager::open(other).error() == StorageErrc::inconsistent_cluster_id);
  other = options({dir}, clock);
  other.node_id = 2;
  REQUIRE(LogManager::open(other).error() == StorageErrc::inconsistent_cluster_id);
}

TEST_CASE("log manager creates, checkpoints, closes cleanly and reloads partitions", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  std::vector<fs::path> dirs{tmp.path / "d0", tmp.path / "d1"};
  runnel::protocol::Uuid topic_id = *uuid_from_base64("ABEiM0RVZneImaq7zN3u_w");
  {
    auto m = LogManager::open(options(dirs, clock));
    REQUIRE(m);
    REQUIRE_FALSE((*m)->was_clean_shutdown(0));
    LogConfig c = options(dirs, clock).default_config;
    auto a = (*m)->get_or_create({"orders", 0}, c, topic_id);
    auto b = (*m)->get_or_create({"orders", 1}, c, topic_id);
    REQUIRE(a);
    REQUIRE(b);
    REQUIRE((*a)->dir().parent_path() != (*b)->dir().parent_path());  // spread over the dirs
    REQUIRE((*m)->get_or_create({"orders", 0}, c).value() == *a);
    REQUIRE(*read_partition_metadata((*a)->dir()) == topic_id);
    for (int i = 0; i < 20; ++i) REQUIRE(append(**a, batch_of(1, i, 100)));
    REQUIRE(append(**b, batch_of(2, 0)));
    REQUIRE((*a)->delete_records(7).value() == 7);
    REQUIRE((*m)->partitions() == std::vector<TopicPartition>{{"orders", 0}, {"orders", 1}});
    REQUIRE_FALSE((*m)->close());
  }
  // Clean markers and checkpoints, in Kafka's formats.
  fs::path a_dir = dirs[0], b_dir = dirs[1];
  REQUIRE(text_of(a_dir / kCleanShutdownFile) == "{\"broker_epoch\":\"-1\",\"version\":\"0\"}");
  REQUIRE(text_of(a_dir / kRecoveryPointCheckpointFile) == "0\n1\norders 0 20\n");
  REQUIRE(text_of(a_dir / kLogStartOffsetCheckpointFile) == "0\n1\norders 0 7\n");
  REQUIRE(text_of(b_dir / kRecoveryPointCheckpointFile) == "0\n1\norders 1 2\n");
  REQUIRE(text_of(b_dir / kLogStartOffsetCheckpointFile) == "0\n0\n");

  auto m = LogManager::open(options(dirs, clock));
  REQUIRE(m);
  REQUIRE((*m)->was_clean_shutdown(0));
  REQUIRE_FALSE(fs::exists(a_dir / kCleanShutdownFile));  // removed at open
  auto a = (*m)->get({"orders", 0});
  REQUIRE(a);
  REQUIRE(a->log_end_offset() == 20);
  REQUIRE(a->log_start_offset() == 7);
  REQUIRE(a->recovery_point() == 20);
  REQUIRE(read_all(*a).front().header.base_offset == 7);
  REQUIRE((*m)->get({"orders", 1})->log_end_offset() == 2);
  REQUIRE_FALSE((*m)->get({"orders", 2}));
}

TEST_CASE("log manager removes partitions by renaming them -delete, then deleting later", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0";
  auto m = LogManager::open(options({dir}, clock));
  auto log = (*m)->get_or_create({"my.topic-x", 3}, options({dir}, clock).default_config);
  REQUIRE(log);
  REQUIRE(append(**log, batch_of(1, 0)));
  REQUIRE_FALSE((*m)->remove({"my.topic-x", 3}));
  REQUIRE((*m)->remove({"my.topic-x", 3}) == StorageErrc::not_found);
  REQUIRE((*m)->partitions().empty());
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  REQUIRE(names.size() == 1);
  const std::string& n = names[0];
  // "<topic>-<partition>.<32 hex>-delete"
  REQUIRE(n.rfind("my.topic-x-3.", 0) == 0);
  REQUIRE(n.size() == std::string("my.topic-x-3.").size() + 32 + 7);
  REQUIRE(n.substr(n.size() - 7) == "-delete");
  REQUIRE_FALSE(TopicPartition::from_dir_name(n));
  REQUIRE(text_of(dir / kRecoveryPointCheckpointFile) == "0\n0\n");
  REQUIRE_FALSE((*m)->delete_removed_dirs(clock.now() + 999));
  REQUIRE(fs::exists(dir / n));
  REQUIRE_FALSE((*m)->tick(clock.now() + 1000));
  REQUIRE_FALSE(fs::exists(dir / n));
}

TEST_CASE("log manager runs retention when the check interval comes round", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0";
  auto o = options({dir}, clock);
  o.default_config.retention_ms = 1000;
  o.default_config.file_delete_delay_ms = 0;
  auto m = LogManager::open(o);
  auto log = (*m)->get_or_create({"t", 0}, o.default_config);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(append(**log, batch_of(1, i, 16, clock.now())));
    REQUIRE_FALSE((*log)->roll());
  }
  REQUIRE((*log)->segment_count() == 4);
  clock.advance(5000);
  REQUIRE_FALSE((*m)->tick(clock.now()));  // not yet log.retention.check.interval.ms
  REQUIRE((*log)->segment_count() == 4);
  REQUIRE_FALSE((*m)->tick(clock.now() + 300000));
  REQUIRE((*log)->segment_count() == 1);
  REQUIRE((*log)->log_start_offset() == 3);
}

TEST_CASE("a log dir without the clean marker is recovered from its recovery points", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0";
  {
    auto m = LogManager::open(options({dir}, clock));
    auto log = (*m)->get_or_create({"t", 0}, options({dir}, clock).default_config);
    for (int i = 0; i < 30; ++i) REQUIRE(append(**log, batch_of(1, i, 64)));
    REQUIRE_FALSE((*log)->sync());
    REQUIRE_FALSE((*m)->checkpoint());
    for (int i = 30; i < 35; ++i) REQUIRE(append(**log, batch_of(1, i, 64)));
    REQUIRE_FALSE((*m)->close());
  }
  fs::remove(dir / kCleanShutdownFile);  // as if the broker had died
  // Tear the last batch: recovery cuts it.
  auto bases = std::vector<fs::path>();
  for (const auto& e : fs::directory_iterator(dir / "t-0"))
    if (e.path().extension() == ".log") bases.push_back(e.path());
  std::sort(bases.begin(), bases.end());
  fs::resize_file(bases.back(), fs::file_size(bases.back()) - 3);
  auto m = LogManager::open(options({dir}, clock));
  REQUIRE(m);
  REQUIRE_FALSE((*m)->was_clean_shutdown(0));
  auto log = (*m)->get({"t", 0});
  REQUIRE(log->log_end_offset() == 34);
  REQUIRE(read_all(*log).size() == 34);
}
