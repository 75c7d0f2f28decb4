#include "storage/group_commit.h"

#include <algorithm>

#include "storage/flush_stats.h"

namespace runnel::storage {

GroupCommit::GroupCommit(fs::path dir, std::shared_ptr<FileHandle> active, int64_t written_end, int64_t synced_end)
    : dir_(std::move(dir)), active_(std::move(active)), written_end_(written_end), synced_end_(synced_end) {}

void GroupCommit::appended(int64_t end) {
  std::lock_guard lock(mu_);
  written_end_ = end;
}

void GroupCommit::rolled(std::vector<std::shared_ptr<FileHandle>> old_files, std::shared_ptr<FileHandle> active) {
  std::lock_guard lock(mu_);
  for (auto& f : old_files) dirty_.push_back(std::move(f));
  active_ = std::move(active);
  dir_dirty_ = true;
}

void GroupCommit::add_dirty(std::vector<std::shared_ptr<FileHandle>> files, bool dir_changed) {
  std::lock_guard lock(mu_);
  // A .txnindex is added on each aborted transaction: once per sync is enough.
  for (auto& f : files)
    if (std::find(dirty_.begin(), dirty_.end(), f) == dirty_.end()) dirty_.push_back(std::move(f));
  dir_dirty_ = dir_dirty_ || dir_changed;
}

void GroupCommit::truncated(int64_t end, std::shared_ptr<FileHandle> active) {
  std::lock_guard lock(mu_);
  written_end_ = end;
  synced_end_ = std::min(synced_end_, end);
  active_ = std::move(active);
  dir_dirty_ = true;
  ++generation_;
  cv_.notify_all();
}

std::error_code GroupCommit::sync() {
  std::unique_lock lock(mu_);
  int64_t target = written_end_;
  // For the batch sizes: this caller is in waiting_ from its first wait
  // until a round's snapshot takes it, or until it is done without one
  // (a round already running covered its append).
  bool counted = false;
  uint64_t counted_in = 0;
  auto uncount = [&] {
    if (counted && rounds_ == counted_in) --waiting_;
  };
  for (;;) {
    if (failure_) {
      uncount();
      return failure_;
    }
    // A truncation may have removed what we were waiting for.
    target = std::min(target, written_end_);
    if (synced_end_ >= target) {
      uncount();
      return {};
    }
    if (!counted) {
      counted = true;
      counted_in = rounds_;
      ++waiting_;
    }
    if (in_progress_) {
      cv_.wait(lock);
      continue;
    }
    // Lead one round for everyone waiting.
    in_progress_ = true;
    auto files = std::move(dirty_);
    dirty_.clear();
    auto active = active_;
    bool dir = std::exchange(dir_dirty_, false);
    int64_t end = written_end_;
    uint64_t generation = generation_;
    // Everyone waiting now appended before this snapshot: this round covers them.
    const auto batch = static_cast<double>(std::exchange(waiting_, 0));
    ++rounds_;
    lock.unlock();
    flush_stats().group_commit_size.observe(batch, FlushStats::kBatchBuckets);
    std::error_code ec;
    for (const auto& f : files)
      if (!ec) ec = datasync_fd(f->fd());
    if (!ec && active) ec = datasync_fd(active->fd());
    if (!ec && dir) ec = fsync_dir(dir_);
    lock.lock();
    in_progress_ = false;
    ++syncs_;
    if (ec) failure_ = ec;
    else if (generation == generation_) synced_end_ = std::max(synced_end_, end);
    cv_.notify_all();
  }
}

int64_t GroupCommit::synced_end() const {
  std::lock_guard lock(mu_);
  return synced_end_;
}

int64_t GroupCommit::written_end() const {
  std::lock_guard lock(mu_);
  return written_end_;
}

uint64_t GroupCommit::sync_count() const {
  std::lock_guard lock(mu_);
  return syncs_;
}

std::error_code GroupCommit::failure() const {
  std::lock_guard lock(mu_);
  return failure_;
}

}  // namespace runnel::storage
