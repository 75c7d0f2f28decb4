#include "storage/log_manager.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <thread>

#include "storage/io.h"
#include "storage/uuid_text.h"

namespace runnel::storage {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Kafka's name for a deleted ("-delete") or stray ("-stray") partition's
// directory, capped at 255 bytes.
std::string set_aside_dir_name(const TopicPartition& tp, std::string_view kind) {
  protocol::Uuid id = random_uuid();
  char hex[33];
  for (size_t i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", id.bytes[i]);
  std::string suffix = "-";
  suffix.append(std::to_string(tp.partition)).append(".").append(hex).append(kind);
  std::string name = tp.topic.substr(0, std::min(tp.topic.size(), 255 - suffix.size()));
  name.append(suffix);
  return name;
}

}  // namespace

Result<std::unique_ptr<LogManager>> LogManager::open(LogManagerOptions options) {
  std::unique_ptr<LogManager> m(new LogManager());
  m->options_ = std::move(options);
  if (m->options_.clock) m->clock_ = m->options_.clock;
  m->clean_.assign(m->options_.log_dirs.size(), false);
  m->hosted_.assign(m->options_.log_dirs.size(), 0);
  for (size_t i = 0; i < m->options_.log_dirs.size(); ++i) {
    std::function<void(std::error_code)> report;
    if (m->options_.on_dir_failure)
      report = [report_dir = m->options_.on_dir_failure, dir = m->options_.log_dirs[i]](std::error_code ec) {
        report_dir(dir, ec);
      };
    m->dir_failures_.push_back(std::make_shared<LogDirFailure>(std::move(report)));
  }
  for (size_t i = 0; i < m->options_.log_dirs.size(); ++i)
    if (auto ec = m->open_dir(i)) return ec;
  int64_t t = m->now();
  m->next_retention_ms_ = t + m->options_.retention_check_interval_ms;
  m->next_flush_ms_ = t + m->options_.flush_check_interval_ms;
  m->next_checkpoint_ms_ = t + m->options_.checkpoint_interval_ms;
  return m;
}

std::error_code LogManager::open_dir(size_t index) {
  const fs::path& dir = options_.log_dirs[index];
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return ec;

  auto meta = read_meta_properties(dir);
  if (meta) {
    if ((options_.cluster_id && meta->cluster_id != *options_.cluster_id) ||
        (options_.node_id >= 0 && meta->node_id != options_.node_id))
      return StorageErrc::inconsistent_cluster_id;
  } else if (meta.error() == StorageErrc::not_found) {
    if (options_.cluster_id) {
      MetaProperties m{1, *options_.cluster_id, options_.node_id, random_uuid()};
      if (auto wec = write_meta_properties(dir, m)) return wec;
    }
  } else {
    return meta.error();
  }

  bool clean = fs::exists(dir / kCleanShutdownFile, ec);
  clean_[index] = clean;
  // A damaged checkpoint only costs work: recovery from the start, or a log
  // start offset at the first segment.
  auto recovery_points = read_offset_checkpoint(dir / kRecoveryPointCheckpointFile);
  auto start_offsets = read_offset_checkpoint(dir / kLogStartOffsetCheckpointFile);
  OffsetCheckpoint rp = recovery_points ? *recovery_points : OffsetCheckpoint();
  OffsetCheckpoint lso = start_offsets ? *start_offsets : OffsetCheckpoint();
  auto cleaner_offsets = read_offset_checkpoint(dir / kCleanerOffsetCheckpointFile);
  OffsetCheckpoint cleaned = cleaner_offsets ? *cleaner_offsets : OffsetCheckpoint();

  int64_t t = now();
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    auto tp = TopicPartition::from_dir_name(name);
    std::error_code link_ec;
    if (entry.is_symlink(link_ec)) {
      // Following it would read, and a delete would leave, data outside the
      // log dir: a planted link must not become a partition.
      if (tp || ends_with(name, "-delete"))
        set_aside_.push_back({entry.path(), "a symbolic link; partition directories are never followed"});
      continue;
    }
    if (!entry.is_directory()) continue;
    if (ends_with(name, "-delete")) {
      removed_.push_back({entry.path(), t + options_.default_config.file_delete_delay_ms});
      continue;
    }
    if (ends_with(name, "-stray")) {
      set_aside_.push_back({entry.path(), "a stray partition directory (no topic claimed it); never opened"});
      continue;
    }
    if (!tp) continue;  // "-future" and foreign directories stay untouched
    // The same partition in two log dirs.
    if (logs_.count(*tp) || found_.count(*tp)) return StorageErrc::already_exists;
    LogOptions lo;
    lo.clean_shutdown = clean;
    lo.recovery_point = rp.count(*tp) ? rp[*tp] : 0;
    lo.log_start_offset = lso.count(*tp) ? lso[*tp] : 0;
    lo.cleaner_checkpoint = cleaned.count(*tp) ? cleaned[*tp] : 0;
    lo.clock = clock_;
    lo.dir_failure = dir_failures_[index];
    if (options_.load_on_demand) {
      found_[*tp] = FoundDir{entry.path(), index, std::move(lo)};
      ++hosted_[index];
      continue;
    }
    auto log = Log::open(entry.path(), options_.default_config, std::move(lo));
    if (!log) return log.error();
    logs_[*tp] = Entry{std::shared_ptr<Log>(std::move(*log)), index};
    ++hosted_[index];
  }
  if (ec) return ec;
  return remove_if_exists(dir / kCleanShutdownFile);
}

LogManager::~LogManager() { (void)close(); }

Result<std::shared_ptr<Log>> LogManager::get_or_create(const TopicPartition& tp, const LogConfig& config,
                                                       std::optional<protocol::Uuid> topic_id) {
  std::unique_lock lock(mu_);
  // Another thread creating this partition: its outcome first.
  created_.wait(lock, [&] { return !creating_.count(tp); });
  if (closed_) return StorageErrc::closed;
  if (auto it = logs_.find(tp); it != logs_.end()) return it->second.log;
  if (auto it = found_.find(tp); it != found_.end()) return load_found(it, config, topic_id);
  return create(lock, tp, config, topic_id);
}

Result<std::shared_ptr<Log>> LogManager::load_found(std::map<TopicPartition, FoundDir>::iterator it,
                                                    const LogConfig& config, std::optional<protocol::Uuid> topic_id) {
  FoundDir& found = it->second;
  LogOptions lo = found.options;
  lo.topic_id = topic_id;
  // On an error the directory and its data stay as found (and in found_, so
  // the checkpoints keep its offsets).
  auto log = Log::open(found.path, config, std::move(lo));
  if (!log) return log.error();
  std::shared_ptr<Log> shared(std::move(*log));
  logs_[it->first] = Entry{shared, found.dir_index};
  found_.erase(it);
  return shared;
}

Result<std::shared_ptr<Log>> LogManager::create(std::unique_lock<std::mutex>& lock, const TopicPartition& tp,
                                                const LogConfig& config, std::optional<protocol::Uuid> topic_id) {
  std::optional<size_t> index;
  for (size_t i = 0; i < hosted_.size(); ++i)
    if (!dir_offline(i) && (!index || hosted_[i] < hosted_[*index])) index = i;
  if (!index) return options_.log_dirs.empty() ? StorageErrc::not_found : StorageErrc::log_dir_failed;
  const fs::path& parent = options_.log_dirs[*index];
  fs::path dir = parent / tp.dir_name();
  std::error_code ec;
  auto status = fs::symlink_status(dir, ec);
  if (fs::is_symlink(status)) return errno_code(ELOOP);
  bool existed = fs::exists(status);
  if (existed && !fs::is_directory(status)) return errno_code(ENOTDIR);

  LogOptions lo;
  lo.clean_shutdown = true;  // a new directory has nothing to recover
  lo.clock = clock_;
  lo.topic_id = topic_id;
  lo.dir_failure = dir_failures_[*index];
  // Counted in its dir from now, so that creations side by side spread.
  ++hosted_[*index];
  creating_.insert(tp);
  lock.unlock();
  std::error_code failed;
  std::shared_ptr<Log> shared;
  {
    auto log = Log::open(dir, config, std::move(lo));
    if (log) {
      failed = fsync_dir(parent);
      if (!failed) shared = std::move(*log);
    } else {
      failed = log.error();
    }
  }  // on a failure the Log, if any, is closed here, before its directory goes
  // Only what this call made goes: never a directory that was there.
  // remove_all needs descriptors to read the directory, and a creation
  // failing for want of them (EMFILE, with creations side by side holding
  // the rest) may find none: the directory is then renamed away (rename
  // needs none) and deleted later with the other removed logs.
  std::optional<fs::path> set_aside;
  if (failed && !existed) {
    std::error_code rm;
    fs::remove_all(dir, rm);
    if (rm) {
      fs::path to = parent / set_aside_dir_name(tp, "-delete");
      if (!rename_path(dir, to)) set_aside = std::move(to);
    }
    (void)fsync_dir(parent);
  }
  lock.lock();
  if (set_aside) removed_.push_back({*set_aside, now() + options_.default_config.file_delete_delay_ms});
  creating_.erase(tp);
  created_.notify_all();
  if (failed) {
    --hosted_[*index];
    return failed;
  }
  logs_[tp] = Entry{shared, *index};
  return shared;
}

std::vector<SetAsideDir> LogManager::set_aside_strays() { return set_aside_unclaimed(nullptr); }

std::vector<SetAsideDir> LogManager::delete_strays(const std::function<bool(const TopicPartition&)>& assigned) {
  return set_aside_unclaimed(&assigned);
}

std::vector<SetAsideDir> LogManager::set_aside_unclaimed(const std::function<bool(const TopicPartition&)>* assigned) {
  std::lock_guard lock(mu_);
  std::vector<SetAsideDir> out;
  for (auto it = found_.begin(); it != found_.end();) {
    const bool to_delete = assigned && !(*assigned)(it->first);
    const fs::path& parent = options_.log_dirs[it->second.dir_index];
    fs::path to = parent / set_aside_dir_name(it->first, to_delete ? "-delete" : "-stray");
    if (auto ec = rename_path(it->second.path, to)) {
      out.push_back({it->second.path, "no topic claims it, and renaming it failed: " + ec.message()});
      ++it;
      continue;
    }
    (void)fsync_dir(parent);
    if (to_delete) {
      out.push_back({to, "the cluster no longer assigns " + it->first.dir_name() + " here; deleted after file.delete.delay.ms"});
      removed_.push_back({to, now() + options_.default_config.file_delete_delay_ms});
    } else {
      out.push_back({to, "no topic claims " + it->first.dir_name() + "; renamed, never opened, left for the operator"});
      set_aside_.push_back(out.back());
    }
    --hosted_[it->second.dir_index];
    it = found_.erase(it);
  }
  return out;
}

std::vector<SetAsideDir> LogManager::set_aside() const {
  std::lock_guard lock(mu_);
  return set_aside_;
}

std::shared_ptr<Log> LogManager::get(const TopicPartition& tp) const {
  std::lock_guard lock(mu_);
  auto it = logs_.find(tp);
  return it == logs_.end() ? nullptr : it->second.log;
}

std::vector<TopicPartition> LogManager::partitions() const {
  std::lock_guard lock(mu_);
  std::vector<TopicPartition> out;
  for (const auto& [tp, _] : logs_) out.push_back(tp);
  return out;
}

std::error_code LogManager::remove(const TopicPartition& tp) {
  std::vector<TopicPartition> unknown;
  if (auto ec = remove(std::span(&tp, 1), &unknown)) return ec;
  return unknown.empty() ? std::error_code() : make_error_code(StorageErrc::not_found);
}

std::error_code LogManager::remove(std::span<const TopicPartition> tps, std::vector<TopicPartition>* unknown) {
  std::lock_guard lock(mu_);
  std::error_code first;
  std::vector<bool> touched(options_.log_dirs.size(), false);
  for (const auto& tp : tps) {
    auto it = logs_.find(tp);
    if (it == logs_.end()) {
      if (unknown) unknown->push_back(tp);
      continue;
    }
    Entry e = it->second;
    logs_.erase(it);
    --hosted_[e.dir_index];
    touched[e.dir_index] = true;
    (void)e.log->close();
    fs::path to = options_.log_dirs[e.dir_index] / set_aside_dir_name(tp, "-delete");
    if (auto ec = rename_path(e.log->dir(), to)) {
      first = ec;
      break;
    }
    removed_.push_back({to, now() + options_.default_config.file_delete_delay_ms});
  }
  for (size_t i = 0; i < touched.size(); ++i) {
    if (!touched[i]) continue;
    std::error_code ec = fsync_dir(options_.log_dirs[i]);
    if (!ec) ec = checkpoint_dir(i, logs_);
    if (ec && !first) first = ec;
  }
  return first;
}

Result<int> LogManager::run_retention() {
  std::vector<std::shared_ptr<Log>> logs;
  {
    std::lock_guard lock(mu_);
    for (const auto& [_, e] : logs_) logs.push_back(e.log);
  }
  int deleted = 0;
  std::error_code first;
  for (const auto& log : logs) {
    auto n = log->delete_old_segments();
    if (n) deleted += *n;
    else if (n.error() != StorageErrc::closed && !first) first = n.error();
    // After retention looked at them: a segment it read stays open one
    // more pass, one untouched for a whole pass is closed.
    log->close_idle_segments();
  }
  if (first) return first;
  return deleted;
}

std::error_code LogManager::flush_dirty_logs(int64_t now_ms) {
  std::vector<std::shared_ptr<Log>> logs;
  {
    std::lock_guard lock(mu_);
    for (const auto& [_, e] : logs_) logs.push_back(e.log);
  }
  std::error_code first;
  for (const auto& log : logs)
    if (auto ec = log->flush_if_due(now_ms); ec && !first) first = ec;
  return first;
}

std::error_code LogManager::checkpoint_dir(size_t index, const std::map<TopicPartition, Entry>& logs) {
  // An offline dir keeps the checkpoints it had: the next start recovers it.
  if (dir_offline(index)) return {};
  OffsetCheckpoint rp, lso, cleaned;
  // Partitions not loaded yet keep the offsets they were found with.
  for (const auto& [tp, f] : found_) {
    if (f.dir_index != index) continue;
    rp[tp] = f.options.recovery_point;
    if (f.options.log_start_offset > 0) lso[tp] = f.options.log_start_offset;
    if (f.options.cleaner_checkpoint > 0) cleaned[tp] = f.options.cleaner_checkpoint;
  }
  for (const auto& [tp, e] : logs) {
    if (e.dir_index != index) continue;
    rp[tp] = e.log->recovery_point();
    if (e.log->config().cleanup_compact) cleaned[tp] = e.log->first_dirty_offset();
    auto bases = e.log->segment_base_offsets();
    int64_t start = e.log->log_start_offset();
    if (!bases.empty() && start > bases.front()) lso[tp] = start;
  }
  const fs::path& dir = options_.log_dirs[index];
  if (auto ec = write_offset_checkpoint(dir / kRecoveryPointCheckpointFile, rp)) return ec;
  // Snapshots below the checkpointed recovery point are no longer needed
  // to recover (Kafka's deleteSnapshotsAfterRecoveryPointCheckpoint).
  for (const auto& [tp, e] : logs)
    if (e.dir_index == index)
      if (auto ec = e.log->delete_snapshots_after_recovery_point_checkpoint()) return ec;
  if (auto ec = write_offset_checkpoint(dir / kCleanerOffsetCheckpointFile, cleaned)) return ec;
  return write_offset_checkpoint(dir / kLogStartOffsetCheckpointFile, lso);
}

std::error_code LogManager::checkpoint() {
  std::lock_guard lock(mu_);
  std::error_code first;
  for (size_t i = 0; i < options_.log_dirs.size(); ++i)
    if (auto ec = checkpoint_dir(i, logs_); ec && !first) first = ec;
  return first;
}

std::error_code LogManager::delete_removed_dirs(int64_t now_ms) {
  std::vector<fs::path> due;
  {
    std::lock_guard lock(mu_);
    auto it = std::partition(removed_.begin(), removed_.end(), [now_ms](const RemovedDir& d) { return d.due_ms > now_ms; });
    for (auto d = it; d != removed_.end(); ++d) due.push_back(d->path);
    removed_.erase(it, removed_.end());
  }
  std::error_code first;
  for (const auto& p : due) {
    std::error_code ec;
    fs::remove_all(p, ec);
    if (ec && !first) first = ec;
  }
  return first;
}

Result<CleanResult> LogManager::run_cleaner(int64_t now_ms) {
  std::vector<std::shared_ptr<Log>> logs;
  {
    std::lock_guard lock(mu_);
    if (closed_) return CleanResult{};
    for (const auto& [_, e] : logs_)
      if (e.log->config().cleanup_compact) logs.push_back(e.log);
  }
  // The filthiest log whose cleaning is due (Kafka's grabFilthiestCompactedLog).
  std::shared_ptr<Log> filthiest;
  double best = -1;
  for (const auto& log : logs) {
    auto info = log->cleanable(now_ms);
    if (!info || !info->due) continue;
    double score = info->need_compaction_now ? 2.0 : info->cleanable_ratio;
    if (score > best) best = score, filthiest = log;
  }
  if (!filthiest) return CleanResult{};
  return filthiest->clean(now_ms, options_.cleaner);
}

std::error_code LogManager::tick(int64_t now_ms) {
  std::error_code first;
  auto keep = [&](std::error_code ec) {
    if (ec && !first) first = ec;
  };
  bool retention, flush, checkpoints;
  {
    std::lock_guard lock(mu_);
    if (closed_) return {};
    retention = now_ms >= next_retention_ms_;
    flush = now_ms >= next_flush_ms_;
    checkpoints = now_ms >= next_checkpoint_ms_;
    if (retention) next_retention_ms_ = now_ms + options_.retention_check_interval_ms;
    if (flush) next_flush_ms_ = now_ms + options_.flush_check_interval_ms;
    if (checkpoints) next_checkpoint_ms_ = now_ms + options_.checkpoint_interval_ms;
  }
  if (retention) {
    auto n = run_retention();
    if (!n) keep(n.error());
  }
  if (options_.cleaner_enable) {
    auto cleaned = run_cleaner(now_ms);
    if (!cleaned) keep(cleaned.error());
  }
  if (flush) keep(flush_dirty_logs(now_ms));
  if (checkpoints) keep(checkpoint());
  keep(delete_removed_dirs(now_ms));
  return first;
}

std::error_code LogManager::close() {
  std::unique_lock lock(mu_);
  if (closed_) return {};
  closed_ = true;
  // A partition being created joins logs_ first, and is closed with them.
  created_.wait(lock, [&] { return creating_.empty(); });
  std::error_code first;
  auto keep = [&](std::error_code ec) {
    if (ec && !first) first = ec;
  };
  std::vector<bool> dir_ok(options_.log_dirs.size(), true);
  std::vector<const Entry*> entries;
  for (const auto& [_, e] : logs_) entries.push_back(&e);
  std::vector<std::error_code> closed(entries.size());
  {
    const size_t n = std::min(entries.size(), static_cast<size_t>(std::max(1, options_.recovery_threads_per_dir)) *
                                                  options_.log_dirs.size());
    std::atomic<size_t> next{0};
    std::vector<std::jthread> closers;
    for (size_t t = 0; t < n; ++t)
      closers.emplace_back([&] {
        for (size_t i = next++; i < entries.size(); i = next++) closed[i] = entries[i]->log->close();
      });
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (closed[i]) {
      keep(closed[i]);
      dir_ok[entries[i]->dir_index] = false;
    }
  }
  // Partitions never loaded from a dir that needs recovery still need it.
  for (const auto& [_, f] : found_)
    if (!clean_[f.dir_index]) dir_ok[f.dir_index] = false;
  for (size_t i = 0; i < options_.log_dirs.size(); ++i) {
    auto ec = checkpoint_dir(i, logs_);
    keep(ec);
    // Only a dir whose logs all closed cleanly may skip recovery next time.
    if (ec || !dir_ok[i] || dir_offline(i)) continue;
    std::string marker = "{\"broker_epoch\":\"" + std::to_string(options_.broker_epoch) + "\",\"version\":\"0\"}";
    keep(write_file_atomically(options_.log_dirs[i] / kCleanShutdownFile, marker));
  }
  return first;
}

}  // namespace runnel::storage
