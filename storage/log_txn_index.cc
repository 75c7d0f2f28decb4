// Log: its segments' aborted-transaction indexes (.txnindex,
// transaction_index.h): the partition's appends, read_committed lookups,
// and which indexes a load trusts. The files follow their segments through
// retention, truncation and compaction in log_retention.cc, segment.cc and
// log_cleaner.cc.
#include "storage/log.h"

namespace runnel::storage {

std::error_code Log::append_aborted_txn(const AbortedTxn& txn) {
  std::lock_guard lock(mu_);
  return append_aborted_txn_locked(txn);
}

std::error_code Log::append_aborted_txn_during_rebuild(const AbortedTxn& txn) {
  std::lock_guard lock(mu_);
  if (txn_index_rebuild_from_ < 0 || txn.last_offset < txn_index_rebuild_from_) return {};
  return append_aborted_txn_locked(txn);
}

std::error_code Log::append_aborted_txn_locked(const AbortedTxn& txn) {
  if (closed_) return StorageErrc::closed;
  if (failure_ || dir_offline()) return StorageErrc::log_dir_failed;
  if (txn.last_offset < segments_.front()->base_offset() || txn.last_offset >= log_end_offset_)
    return StorageErrc::offset_out_of_range;
  size_t at = floor_segment(txn.last_offset);
  TransactionIndex& index = segments_[at]->txn_index();
  bool created = !index.file();
  if (auto ec = index.append(txn)) return ec == StorageErrc::invalid_argument ? ec : fail(ec);
  // An unclean open re-validates (and so resets) the segments from the one
  // holding the recovery point on: an entry there is durable with the next
  // sync. One in an earlier segment (the rebuild of an index that failed its
  // sanity check) must be durable now, as no open would redo it.
  if (at >= floor_segment(group_commit_->synced_end())) {
    group_commit_->add_dirty({index.file()}, created);
    return {};
  }
  if (auto ec = index.flush()) return fail(ec);
  if (created)
    if (auto ec = fsync_dir(dir_)) return fail(ec);
  return {};
}

Result<std::vector<AbortedTxn>> Log::collect_aborted_txns(int64_t start_offset, int64_t upper_bound_offset) const {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  if (dir_offline()) return StorageErrc::log_dir_failed;
  std::vector<AbortedTxn> out;
  for (size_t i = floor_segment(start_offset); i < segments_.size(); ++i) {
    auto found = segments_[i]->txn_index().collect(start_offset, upper_bound_offset);
    out.insert(out.end(), found.aborted.begin(), found.aborted.end());
    if (found.complete) break;
  }
  return out;
}

int64_t Log::txn_index_rebuild_from() const {
  std::lock_guard lock(mu_);
  return txn_index_rebuild_from_;
}

void Log::distrust_txn_indexes_from(int64_t base_offset) {
  if (txn_index_rebuild_from_ < 0 || base_offset < txn_index_rebuild_from_) txn_index_rebuild_from_ = base_offset;
}

void Log::check_txn_indexes() {
  for (const auto& s : segments_) {
    if (!s->txn_index().sane()) {
      distrust_txn_indexes_from(s->base_offset());
      return;
    }
  }
}

// Kafka recovers only the segment with the bad index, rebuilding its
// entries from the producer state. Here the partition rebuilds them by
// replaying the log, which re-appends the entries of every later segment
// too: those are emptied as well, so each is appended once and in order.
std::error_code Log::reset_untrusted_txn_indexes() {
  if (txn_index_rebuild_from_ < 0) return {};
  for (size_t i = floor_segment(txn_index_rebuild_from_); i < segments_.size(); ++i)
    if (auto ec = segments_[i]->txn_index().reset()) return ec;
  return {};
}

}  // namespace runnel::storage
