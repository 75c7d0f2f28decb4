// The leader epoch cache: for each leader epoch, the first offset written in
// it (Kafka's LeaderEpochFileCache), persisted as the partition's
// leader-epoch-checkpoint (see checkpoint.h) every time it changes.
//
// Entries are ordered by epoch and by start offset alike. Assigning an entry
// drops any later entry that contradicts it (epoch or start offset >= it), so
// the cache stays monotonic after a leader change. Not thread-safe: the
// owning Log serialises access.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "storage/checkpoint.h"
#include "storage/errors.h"

namespace runnel::storage {

class LeaderEpochCache {
 public:
  LeaderEpochCache() = default;
  // Reads <partition dir>/leader-epoch-checkpoint; a missing file is empty.
  static Result<LeaderEpochCache> load(const fs::path& partition_dir);

  // Records that `epoch` starts at `start_offset`. No-op when `epoch` is
  // already the latest with a start offset <= `start_offset`.
  std::error_code assign(int32_t epoch, int64_t start_offset);
  // Removes entries starting at or after `end_offset` (log truncation).
  std::error_code truncate_from_end(int64_t end_offset);
  // Removes entries wholly before `start_offset`; the last of them is kept,
  // moved to start at `start_offset` (log start offset advanced).
  std::error_code truncate_from_start(int64_t start_offset);
  std::error_code clear();
  // While deferred, changes stay in memory (loading makes many); end_deferral()
  // writes the checkpoint once if anything changed.
  void defer_writes() { deferred_ = true; }
  std::error_code end_deferral();

  std::optional<EpochEntry> latest_entry() const;
  std::optional<EpochEntry> earliest_entry() const;
  std::optional<int32_t> latest_epoch() const;
  // The epoch that wrote `offset`.
  std::optional<int32_t> epoch_for_offset(int64_t offset) const;
  // OffsetsForLeaderEpoch: the largest epoch <= `requested` and its end
  // offset (next epoch's start, or `log_end_offset` for the latest);
  // (-1, -1) when unknown.
  std::pair<int32_t, int64_t> end_offset_for(int32_t requested, int64_t log_end_offset) const;
  const std::vector<EpochEntry>& entries() const { return entries_; }

 private:
  std::error_code persist();

  fs::path file_;
  std::vector<EpochEntry> entries_;
  std::vector<EpochEntry> persisted_;  // what the checkpoint file holds
  bool deferred_ = false;
};

}  // namespace runnel::storage
