#include <sys/resource.h>

#include <thread>

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

// Leaves this process `spare` free file descriptors: the holes below the
// highest open one are filled, the soft RLIMIT_NOFILE set just above it.
// Restores both on destruction.
struct FewFileDescriptors {
  rlimit saved{};
  std::vector<int> fillers;
  explicit FewFileDescriptors(int spare) {
    int highest = 0;
    for (const auto& e : fs::directory_iterator("/proc/self/fd")) highest = std::max(highest, std::stoi(e.path().filename().string()));
    for (int fd = 0; fd < highest;) {
      fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      REQUIRE(fd >= 0);
      fillers.push_back(fd);
      highest = std::max(highest, fd);
    }
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &saved) == 0);
    rlimit low = saved;
    low.rlim_cur = static_cast<rlim_t>(highest + 1 + spare);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
  }
  ~FewFileDescriptors() {
    ::setrlimit(RLIMIT_NOFILE, &saved);
    for (int fd : fillers) ::close(fd);
  }
};

std::vector<std::string> entries_of(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

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

TEST_CASE("log manager removes many partitions at once, each dir's checkpoints written after them", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path a = tmp.path / "a", b = tmp.path / "b";
  auto o = options({a, b}, clock);
  auto m = LogManager::open(o);
  // Placed in the dir with fewest partitions: t-0 in a, t-1 in b, ...
  for (int p = 0; p < 6; ++p) REQUIRE((*m)->get_or_create({"t", p}, o.default_config));
  REQUIRE(fs::exists(a / "t-4"));
  REQUIRE(fs::exists(b / "t-5"));
  std::vector<TopicPartition> gone{{"t", 0}, {"t", 1}, {"t", 2}, {"t", 3}, {"u", 0}}, unknown;
  REQUIRE_FALSE((*m)->remove(gone, &unknown));
  REQUIRE(unknown == std::vector<TopicPartition>{{"u", 0}});
  REQUIRE((*m)->partitions() == std::vector<TopicPartition>{{"t", 4}, {"t", 5}});
  REQUIRE(text_of(a / kRecoveryPointCheckpointFile) == "0\n1\nt 4 0\n");
  REQUIRE(text_of(b / kRecoveryPointCheckpointFile) == "0\n1\nt 5 0\n");
  int renamed = 0;
  for (const auto& dir : {a, b})
    for (const auto& e : fs::directory_iterator(dir)) renamed += e.path().filename().string().ends_with("-delete");
  REQUIRE(renamed == 4);
  // The counts behind placement follow the removals: b is not fuller now.
  REQUIRE((*m)->remove(std::vector<TopicPartition>{{"t", 4}}) == std::error_code());
  REQUIRE((*m)->get_or_create({"v", 0}, o.default_config));
  REQUIRE(fs::exists(a / "v-0"));
  REQUIRE_FALSE((*m)->tick(clock.now() + 1000));
  for (const auto& dir : {a, b})
    for (const auto& e : fs::directory_iterator(dir)) REQUIRE_FALSE(e.path().filename().string().ends_with("-delete"));
}

TEST_CASE("log manager creates partitions from several threads at once", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  std::vector<fs::path> dirs{tmp.path / "a", tmp.path / "b"};
  auto o = options(dirs, clock);
  constexpr int kThreads = 8, kEach = 8;
  {
    auto m = LogManager::open(o);
    std::vector<std::shared_ptr<Log>> same(kThreads);
    std::vector<int> failures(kThreads, 0);
    {
      std::vector<std::jthread> threads;
      for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
          for (int i = 0; i < kEach; ++i)
            if (!(*m)->get_or_create({"t", t * kEach + i}, o.default_config)) ++failures[t];
          // Every thread asks for one partition: one Log is made, all get it.
          auto s = (*m)->get_or_create({"same", 0}, o.default_config);
          if (s) same[t] = *s;
        });
    }
    REQUIRE(failures == std::vector<int>(kThreads, 0));
    for (const auto& s : same) REQUIRE((s && s == same[0]));
    REQUIRE((*m)->partitions().size() == kThreads * kEach + 1);
    // Spread over the dirs as one after another would be.
    auto count = [](const fs::path& dir) {
      size_t n = 0;
      for (const auto& e : fs::directory_iterator(dir)) n += e.is_directory();
      return n;
    };
    REQUIRE(count(dirs[0]) + count(dirs[1]) == kThreads * kEach + 1);
    REQUIRE(std::max(count(dirs[0]), count(dirs[1])) - std::min(count(dirs[0]), count(dirs[1])) <= 1);
    REQUIRE_FALSE((*m)->close());
  }
  auto m = LogManager::open(o);
  REQUIRE((*m)->partitions().size() == kThreads * kEach + 1);
  REQUIRE((*m)->was_clean_shutdown(0));
  REQUIRE((*m)->was_clean_shutdown(1));
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

TEST_CASE("get_or_create out of file descriptors fails with EMFILE and leaves no directory", "[storage][faults]") {
  // It once crashed: the half-opened Log's destructor synced a group commit
  // that did not exist yet. And each failure left a directory behind.
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0";
  auto m = LogManager::open(options({dir}, clock));
  REQUIRE(m);
  LogConfig c = options({dir}, clock).default_config;
  runnel::protocol::Uuid topic_id = *uuid_from_base64("ABEiM0RVZneImaq7zN3u_w");
  std::optional<TopicPartition> failed;
  std::error_code error;
  size_t opened = 0;
  {
    FewFileDescriptors limit(24);
    for (int32_t p = 0; p < 200 && !failed; ++p) {
      auto log = (*m)->get_or_create({"many", p}, c, topic_id);
      if (log) ++opened;
      else failed = TopicPartition{"many", p}, error = log.error();
    }
  }
  REQUIRE(failed);
  REQUIRE(error == std::errc::too_many_files_open);
  REQUIRE(opened > 0);
  REQUIRE((*m)->partitions().size() == opened);
  REQUIRE_FALSE(fs::exists(dir / failed->dir_name()));
  REQUIRE(entries_of(dir).size() == opened + 1);  // the partitions and meta.properties
  // With descriptors back the same partition is created normally.
  auto again = (*m)->get_or_create(*failed, c, topic_id);
  REQUIRE(again);
  REQUIRE(append(**again, batch_of(1, 0)));
}

TEST_CASE("get_or_create never removes what it did not make", "[storage][faults]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0";
  auto o = options({dir}, clock);
  o.load_on_demand = true;
  {
    auto m = LogManager::open(o);
    auto log = (*m)->get_or_create({"kept", 0}, o.default_config);
    REQUIRE(append(**log, batch_of(3, 0)));
    REQUIRE_FALSE((*m)->close());
  }
  // A file where a partition directory should be.
  write_bytes(dir / "blocked-0", Bytes{1, 2, 3});
  // An existing partition that cannot load: a directory where its time index should be.
  fs::path timeindex = dir / "kept-0" / "00000000000000000000.timeindex";
  fs::remove(timeindex);
  fs::create_directory(timeindex);
  auto log_size = fs::file_size(dir / "kept-0" / "00000000000000000000.log");

  auto m = LogManager::open(o);
  REQUIRE(m);
  REQUIRE((*m)->get_or_create({"blocked", 0}, o.default_config).error() == std::errc::not_a_directory);
  REQUIRE(file_bytes(dir / "blocked-0") == Bytes{1, 2, 3});
  REQUIRE_FALSE((*m)->get_or_create({"kept", 0}, o.default_config));
  REQUIRE(fs::file_size(dir / "kept-0" / "00000000000000000000.log") == log_size);
  REQUIRE(fs::is_directory(timeindex));
  // Repaired, it loads with its data.
  fs::remove(timeindex);
  auto kept = (*m)->get_or_create({"kept", 0}, o.default_config);
  REQUIRE(kept);
  REQUIRE((*kept)->log_end_offset() == 3);
}

TEST_CASE("partition directories nobody asks for are set aside as -stray and never opened again", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0";
  auto o = options({dir}, clock);
  o.load_on_demand = true;
  {
    auto m = LogManager::open(o);
    REQUIRE(append(**(*m)->get_or_create({"claimed", 0}, o.default_config), batch_of(2, 0)));
    REQUIRE(append(**(*m)->get_or_create({"orphan", 0}, o.default_config), batch_of(5, 0)));
    REQUIRE_FALSE((*m)->close());
  }
  std::string stray;
  {
    auto m = LogManager::open(o);
    REQUIRE((*m)->partitions().empty());  // found, not loaded
    REQUIRE((*(*m)->get_or_create({"claimed", 0}, o.default_config))->log_end_offset() == 2);
    auto set_aside = (*m)->set_aside_strays();
    REQUIRE(set_aside.size() == 1);
    stray = set_aside[0].path.filename().string();
    // "<topic>-<partition>.<32 hex>-stray", Kafka's name.
    REQUIRE(stray.rfind("orphan-0.", 0) == 0);
    REQUIRE(stray.size() == std::string("orphan-0.").size() + 32 + 6);
    REQUIRE(stray.substr(stray.size() - 6) == "-stray");
    REQUIRE(fs::exists(dir / stray / "00000000000000000000.log"));  // data kept for the operator
    REQUIRE((*m)->partitions() == std::vector<TopicPartition>{{"claimed", 0}});
    REQUIRE_FALSE((*m)->close());
  }
  auto m = LogManager::open(o);
  auto set_aside = (*m)->set_aside();
  REQUIRE(set_aside.size() == 1);
  REQUIRE(set_aside[0].path.filename() == stray);
  REQUIRE((*m)->set_aside_strays().size() == 1);  // "claimed-0", not asked for this time
  REQUIRE((*(*m)->get_or_create({"orphan", 0}, o.default_config))->log_end_offset() == 0);  // a new, empty log
}

TEST_CASE("a partition directory that is a symbolic link is never followed", "[storage]") {
  TempDir tmp;
  FakeClock clock;
  fs::path dir = tmp.path / "d0", elsewhere = tmp.path / "elsewhere";
  {
    auto m = LogManager::open(options({elsewhere}, clock));
    REQUIRE(append(**(*m)->get_or_create({"t", 0}, options({elsewhere}, clock).default_config), batch_of(4, 0)));
    REQUIRE_FALSE((*m)->close());
  }
  fs::create_directories(dir);
  fs::create_directory_symlink(elsewhere / "t-0", dir / "t-0");
  auto m = LogManager::open(options({dir}, clock));
  REQUIRE(m);
  REQUIRE_FALSE((*m)->get({"t", 0}));
  auto set_aside = (*m)->set_aside();
  REQUIRE(set_aside.size() == 1);
  REQUIRE(set_aside[0].path == dir / "t-0");
  // Neither created through it nor deleted through it.
  REQUIRE((*m)->get_or_create({"t", 0}, options({dir}, clock).default_config).error() ==
          std::errc::too_many_symbolic_link_levels);
  REQUIRE((*m)->remove({"t", 0}) == StorageErrc::not_found);
  REQUIRE(fs::is_symlink(dir / "t-0"));
  REQUIRE(fs::file_size(elsewhere / "t-0" / "00000000000000000000.log") > 0);
}
