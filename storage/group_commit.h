// Group commit: any number of threads wait for their appends to be durable,
// and one fdatasync serves all of them.
//
// The log's owner reports each append (the offset the log now ends at) and
// each roll (files that still need an fsync, and that the directory changed).
// sync() makes everything appended before the call durable: the first caller
// to find no sync running becomes the leader, takes a snapshot of the dirty
// files and the end offset, syncs them without holding any lock, and wakes
// everyone that snapshot covers; callers that arrived during its sync wait
// and one of them leads the next round for all of them. So a caller always
// waits for a sync that started after its append.
//
// An fdatasync failure is sticky (the kernel may have dropped the dirty
// pages, so a later success would be a lie): every later sync() fails too.
//
// Thread-safe: append/roll/truncate notices come from the log's owner,
// sync() from any thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <system_error>
#include <vector>

#include "storage/io.h"

namespace runnel::storage {

class GroupCommit {
 public:
  GroupCommit(fs::path dir, std::shared_ptr<FileHandle> active, int64_t written_end, int64_t synced_end);

  // The log now ends at `end`; `active` (the current .log) has unsynced bytes.
  void appended(int64_t end);
  // A roll: `old_files` (the previous segment's files) still need a sync,
  // `active` is the new segment's .log, and the directory has a new entry.
  void rolled(std::vector<std::shared_ptr<FileHandle>> old_files, std::shared_ptr<FileHandle> active);
  // Files of segments the log still has from before a truncation or a load
  // that may hold unsynced bytes.
  void add_dirty(std::vector<std::shared_ptr<FileHandle>> files, bool dir_changed);
  // The log was truncated to `end` (or restarted at it): nothing at or past
  // `end` counts as synced, and a sync in flight does not either.
  void truncated(int64_t end, std::shared_ptr<FileHandle> active);

  // Blocks until everything appended before the call is on disk.
  std::error_code sync();

  int64_t synced_end() const;   // every offset below is durable
  int64_t written_end() const;
  uint64_t sync_count() const;  // fdatasync rounds done (for tests and metrics)
  std::error_code failure() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  fs::path dir_;
  std::shared_ptr<FileHandle> active_;
  std::vector<std::shared_ptr<FileHandle>> dirty_;
  bool dir_dirty_ = false;
  int64_t written_end_;
  int64_t synced_end_;
  uint64_t generation_ = 0;
  bool in_progress_ = false;
  uint64_t syncs_ = 0;
  size_t waiting_ = 0;   // callers not yet taken by a round's snapshot (flush_stats)
  uint64_t rounds_ = 0;  // snapshots taken
  std::error_code failure_;
};

}  // namespace runnel::storage
