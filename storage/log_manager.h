// The broker's log directories and every partition log in them (Kafka's
// LogManager).
//
//   <log dir>/meta.properties                     cluster.id, node.id, directory.id (meta_properties.h)
//            /recovery-point-offset-checkpoint    per partition: offset below which all is fsynced
//            /log-start-offset-checkpoint         per partition whose log start offset is past its
//                                                 first segment (checkpoint.h)
//            /cleaner-offset-checkpoint           per compacted partition: its first dirty offset
//            /.kafka_cleanshutdown                {"broker_epoch":"<n>","version":"0"}, written
//                                                 by close(), removed by open()
//            /<topic>-<partition>/                one Log (log.h)
//            /<topic>-<partition>.<32 hex>-delete/  a removed partition, deleted after
//                                                 file.delete.delay.ms
//            /<topic>-<partition>.<32 hex>-stray/   a partition no topic claims, set
//                                                 aside at startup and never opened
//
// open() loads every partition directory, recovering the logs of a log dir
// that has no clean-shutdown marker; with load_on_demand it only finds them,
// and get_or_create() loads each (see there). A partition directory that is
// a symbolic link is never followed: it is set aside, not loaded, and
// get_or_create() refuses to create through it. A log dir whose logs hit an
// I/O error goes offline (log_dir_failure.h).
//
// A failed get_or_create() leaves nothing behind: no Log, no open file, and
// a directory it made itself is removed again (an existing one, with its
// data, stays as it was). The caller may retry it later. The periodic work (retention every
// log.retention.check.interval.ms, flush.ms flushes, checkpoints, removing
// deleted directories, one bounded compaction pass) runs when the broker
// calls tick() from a timer.
//
// Thread-safe: every method may be called from any thread. Partitions
// created from several threads at once make and sync their files side by
// side (the lock is not held meanwhile), which is most of what creating
// many partitions costs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "storage/checkpoint.h"
#include "storage/log.h"
#include "storage/meta_properties.h"
#include "storage/topic_partition.h"

namespace runnel::storage {

inline constexpr const char* kCleanShutdownFile = ".kafka_cleanshutdown";

struct LogManagerOptions {
  std::vector<fs::path> log_dirs;               // log.dirs
  LogConfig default_config;                     // the broker's log.* defaults
  const Clock* clock = nullptr;                 // defaults to Clock::system()
  // meta.properties: written if missing when cluster_id is set; when
  // present it must match (inconsistent_cluster_id otherwise).
  std::optional<std::string> cluster_id;
  int32_t node_id = -1;
  int64_t broker_epoch = -1;                    // recorded in .kafka_cleanshutdown
  int64_t retention_check_interval_ms = 300000; // log.retention.check.interval.ms
  int64_t flush_check_interval_ms = 1000;       // how often flush.ms is looked at
  int64_t checkpoint_interval_ms = 60000;       // log.flush.offset.checkpoint.interval.ms
  bool cleaner_enable = true;                   // log.cleaner.enable
  CleanerOptions cleaner;                       // one compaction pass's bounds
  // Find partition directories at open() but load each only when
  // get_or_create() first asks for it, with the config it passes; what is
  // never asked for is then set aside by set_aside_strays().
  bool load_on_demand = false;
  // num.recovery.threads.per.data.dir: how many threads per log dir close
  // the logs at shutdown, as Kafka's LogManager.shutdown uses them (each
  // log's close syncs it and trims its indexes: thousands of partitions
  // one after another took longer than a graceful stop may).
  int recovery_threads_per_dir = 2;
  // Called once per log dir, when its first I/O error takes it offline
  // (Kafka's "Stopping serving logs in dir"), from the thread that hit it.
  std::function<void(const fs::path& dir, std::error_code)> on_dir_failure;
};

// A directory in a log dir that is not loaded, and why.
struct SetAsideDir {
  fs::path path;
  std::string reason;
};

class LogManager {
 public:
  static Result<std::unique_ptr<LogManager>> open(LogManagerOptions options);
  ~LogManager();
  LogManager(const LogManager&) = delete;
  LogManager& operator=(const LogManager&) = delete;

  // The log of `tp`: a loaded one (which keeps its config), one found on
  // disk and loaded now with `config`, or a new one created with `config`
  // in the online log dir holding the fewest partitions. On an error (an
  // I/O error, EMFILE, ENOSPC, every dir offline: log_dir_failed) nothing is
  // left behind; see the top of this file.
  Result<std::shared_ptr<Log>> get_or_create(const TopicPartition& tp, const LogConfig& config,
                                             std::optional<protocol::Uuid> topic_id = std::nullopt);
  // With load_on_demand: renames every partition directory found at open()
  // that get_or_create() never asked for to "<topic>-<p>.<uuid>-stray", so
  // it is not found again, and returns them. Kafka deletes a stray log
  // later; Runnel leaves it for the operator (see README).
  std::vector<SetAsideDir> set_aside_strays();
  // The same, for a cluster broker, whose metadata (etcd's) is the
  // authority on what it hosts: each unclaimed directory is renamed
  // "-delete" and deleted file.delete.delay.ms later, as a removed
  // partition's is -- a topic deleted while this broker was down. One the
  // metadata still assigns here (`assigned`: its log failed to open) is
  // set aside as "-stray" instead, never deleted.
  std::vector<SetAsideDir> delete_strays(const std::function<bool(const TopicPartition&)>& assigned);
  // What open() did not load: partition directories that are symbolic
  // links, and "-stray" directories left by an earlier start.
  std::vector<SetAsideDir> set_aside() const;
  bool dir_offline(size_t dir_index) const { return dir_failures_[dir_index]->offline(); }
  std::shared_ptr<Log> get(const TopicPartition& tp) const;
  std::vector<TopicPartition> partitions() const;
  // Closes the log and renames its directory "<topic>-<p>.<uuid>-delete";
  // it is deleted file.delete.delay.ms later. not_found if unknown.
  std::error_code remove(const TopicPartition& tp);
  // Many at once, as Kafka's asyncDelete of a topic's partitions: each is
  // closed and renamed as above, then each log dir touched is synced and
  // its checkpoints written once (one at a time, deleting n partitions
  // from a dir of m rewrote its checkpoints, and rescanned the m
  // directories for snapshots, n times: a 1,000-partition topic beside
  // 9,000 others took over 30 s). Unknown partitions are skipped and
  // listed in `unknown` when given; returns the first error.
  std::error_code remove(std::span<const TopicPartition> tps, std::vector<TopicPartition>* unknown = nullptr);

  // One retention pass over every log; returns the segments deleted. It
  // also closes the files of segments idle since the previous pass.
  Result<int> run_retention();
  // One bounded compaction pass over the filthiest compacted log that is due.
  Result<CleanResult> run_cleaner(int64_t now_ms);
  // Syncs logs whose flush.ms passed or that rolled a segment.
  std::error_code flush_dirty_logs(int64_t now_ms);
  // Rewrites both offset checkpoints in every log dir.
  std::error_code checkpoint();
  // Deletes removed partition directories whose delay passed.
  std::error_code delete_removed_dirs(int64_t now_ms);
  // Whatever of the above is due at `now_ms`.
  std::error_code tick(int64_t now_ms);

  // Syncs and closes every log, writes the checkpoints and the
  // clean-shutdown markers. Later calls do nothing.
  std::error_code close();

  const std::vector<fs::path>& log_dirs() const { return options_.log_dirs; }
  // Whether the log dir at this index had a clean-shutdown marker at open.
  bool was_clean_shutdown(size_t dir_index) const { return clean_[dir_index]; }

 private:
  // Null `assigned`: every unclaimed directory is set aside ("-stray").
  std::vector<SetAsideDir> set_aside_unclaimed(const std::function<bool(const TopicPartition&)>* assigned);
  struct Entry {
    std::shared_ptr<Log> log;
    size_t dir_index = 0;
  };
  struct RemovedDir {
    fs::path path;
    int64_t due_ms;
  };
  // A partition directory found at open() and not loaded yet.
  struct FoundDir {
    fs::path path;
    size_t dir_index = 0;
    LogOptions options;
  };

  LogManager() = default;
  std::error_code open_dir(size_t index);
  Result<std::shared_ptr<Log>> load_found(std::map<TopicPartition, FoundDir>::iterator it, const LogConfig& config,
                                          std::optional<protocol::Uuid> topic_id);
  // Called with `lock` held; releases it while the new log's files are
  // made and synced, so that partitions are created side by side.
  Result<std::shared_ptr<Log>> create(std::unique_lock<std::mutex>& lock, const TopicPartition& tp,
                                      const LogConfig& config, std::optional<protocol::Uuid> topic_id);
  std::error_code checkpoint_dir(size_t index, const std::map<TopicPartition, Entry>& logs);
  int64_t now() const { return clock_->wall_ms(); }

  LogManagerOptions options_;
  const Clock* clock_ = &Clock::system();
  mutable std::mutex mu_;
  std::map<TopicPartition, Entry> logs_;
  std::map<TopicPartition, FoundDir> found_;
  // The partitions (loaded or found) in each log dir, kept as logs_ and
  // found_ change: create() places a new one in the dir with fewest, and
  // counting the maps there made creating n partitions O(n^2).
  std::vector<size_t> hosted_;
  // Partitions create() is making outside the lock; get_or_create() of
  // the same one, and close(), wait on `created_` until they are done.
  std::set<TopicPartition> creating_;
  std::condition_variable created_;
  std::vector<SetAsideDir> set_aside_;
  std::vector<std::shared_ptr<LogDirFailure>> dir_failures_;
  std::vector<bool> clean_;
  std::vector<RemovedDir> removed_;
  int64_t next_retention_ms_ = 0;
  int64_t next_flush_ms_ = 0;
  int64_t next_checkpoint_ms_ = 0;
  bool closed_ = false;
};

}  // namespace runnel::storage
