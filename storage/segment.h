// One segment of a partition log: three or four files in the partition
// directory, named by the segment's base offset (the smallest offset it may
// hold) as 20 zero-padded decimal digits:
//
//   00000000000000001000.log        record batches exactly as appended (batch_scan.h)
//   00000000000000001000.index      sparse offset -> position (offset_index.h)
//   00000000000000001000.timeindex  sparse timestamp -> offset (time_index.h)
//   00000000000000001000.txnindex   aborted transactions, only once there is
//                                   one (transaction_index.h)
//
// Files being deleted carry a ".deleted" suffix until file.delete.delay.ms
// passes. While a segment is active its indexes are preallocated to
// segment.index.bytes (and its .log to segment.bytes when preallocate=true);
// on roll and close they are trimmed to their content, as Kafka does.
//
// Index files are not trusted: they are sanity-checked before first use and
// every index-guided lookup re-checks the batch header it lands on. A bad
// index is rebuilt from the .log; it never yields a wrong read. The
// .txnindex cannot be rebuilt from the .log alone (its first offsets come
// from producer state): recover() leaves it alone and the Log decides
// (Log::txn_index_rebuild_from).
//
// Not thread-safe: the owning Log serialises every call.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/batch_scan.h"
#include "storage/io.h"
#include "storage/log_config.h"
#include "storage/offset_index.h"
#include "storage/record_times.h"
#include "storage/time_index.h"
#include "storage/transaction_index.h"

namespace runnel::storage {

// A batch and where it starts in the .log file.
struct BatchLocation {
  int64_t position = 0;
  BatchHeader header;
};

// Whole batches [position, position + length) of a segment's .log file.
struct SegmentRead {
  int64_t position = 0;
  int64_t length = 0;
  int64_t first_offset = 0;  // base offset of the first batch
};

// A ListOffsets answer: the record's timestamp and offset and the epoch of its batch.
struct TimestampAndOffset {
  int64_t timestamp = kNoTimestamp;
  int64_t offset = -1;
  int32_t leader_epoch = -1;
  bool operator==(const TimestampAndOffset&) const = default;
};

// The inputs of Segment::should_roll (Kafka's RollParams).
struct RollParams {
  int64_t max_segment_ms = 0;
  int32_t max_segment_bytes = 0;
  int64_t max_timestamp_in_messages = kNoTimestamp;
  int64_t max_offset_in_messages = 0;
  int64_t messages_size = 0;
  int64_t now_ms = 0;
};

class Segment {
 public:
  static std::string file_stem(int64_t base_offset);
  static fs::path log_path(const fs::path& dir, int64_t base_offset);
  static fs::path index_path(const fs::path& dir, int64_t base_offset);
  static fs::path time_index_path(const fs::path& dir, int64_t base_offset);
  static fs::path txn_index_path(const fs::path& dir, int64_t base_offset);
  static constexpr const char* kDeletedSuffix = ".deleted";
  // Compaction output being written, and output ready to replace its inputs.
  static constexpr const char* kCleanedSuffix = ".cleaned";
  static constexpr const char* kSwapSuffix = ".swap";

  // A new, empty segment; files left with that base offset are replaced.
  // On an error (ENOSPC allocating them) none of its files is left.
  static Result<std::unique_ptr<Segment>> create(const fs::path& dir, int64_t base_offset, const LogConfig& config,
                                                 int64_t now_ms);
  // An existing .log. Index files that are missing are rebuilt from it.
  static Result<std::unique_ptr<Segment>> open_existing(const fs::path& dir, int64_t base_offset,
                                                        const LogConfig& config, int64_t now_ms);

  int64_t base_offset() const { return base_offset_; }
  int64_t size() const { return size_; }
  const std::shared_ptr<FileHandle>& log_file() const { return log_; }
  const fs::path& dir() const { return dir_; }
  void set_config(const LogConfig& config);
  // Offsets of this segment are below `limit` (the next segment's base).
  void set_offset_limit(int64_t limit) { offset_limit_ = limit; }

  // --- append
  bool should_roll(const RollParams& p);
  int64_t time_waited_for_roll(int64_t now_ms, int64_t message_timestamp);
  // The first batch's max timestamp (Kafka's getFirstBatchTimestamp), for
  // max.compaction.lag.ms; nullopt for an empty segment.
  std::optional<int64_t> first_batch_timestamp() {
    load_rolling_timestamp();
    return rolling_timestamp_;
  }
  // Appends whole batches whose offsets are already assigned; adds index
  // entries every index.interval.bytes, batch by batch (as Kafka's
  // LogSegment.append does), so how batches were grouped into appends
  // never shows in the indexes. Their last offset must fit the index.
  std::error_code append(ByteView batches);

  // --- read
  // The first batch whose last offset >= `offset`; nullopt if none here.
  Result<std::optional<BatchLocation>> translate_offset(int64_t offset);
  // Whole batches from the one holding `offset`, at most `max_bytes` (but
  // the first batch whole if `min_one_batch`), only batches whose last
  // offset < `max_offset`. nullopt if no batch here reaches `offset`.
  Result<std::optional<SegmentRead>> read(int64_t offset, int64_t max_bytes, int64_t max_offset, bool min_one_batch);
  // The first record at or after `starting_offset` with timestamp >= `ts`.
  Result<std::optional<TimestampAndOffset>> find_offset_by_timestamp(int64_t ts, int64_t starting_offset);
  // The first record holding this segment's largest timestamp.
  Result<std::optional<TimestampAndOffset>> find_max_timestamp();

  // --- recovery
  // Checks the indexes and the batches after the last index entry (CRC
  // included). The next offset if all is well; nullopt if the segment needs
  // recover().
  Result<std::optional<int64_t>> check_tail();
  // Rebuilds both indexes from the .log, validating every batch; with
  // `truncate_log`, cuts the .log at the first invalid batch. `on_batch`
  // sees each valid batch. Returns the bytes found invalid.
  Result<int64_t> recover(bool truncate_log, const std::function<void(const BatchHeader&)>& on_batch = {});
  // The offset after the last batch.
  Result<int64_t> read_next_offset();

  // --- lifecycle
  // Removes every batch from the one holding `offset` on; the segment
  // becomes the active one (indexes grow back). Returns bytes removed.
  Result<int64_t> truncate_to(int64_t offset, int64_t now_ms);
  std::error_code on_become_inactive();
  // Indexes back to full preallocated size, holding only the entries that
  // appending its batches would have made (see segment.cc).
  std::error_code make_active();
  std::error_code flush();
  // Final time index entry, trims, closes files (reads in flight keep the fd).
  std::error_code close();
  // Renames its files to *.deleted and returns their new paths.
  Result<std::vector<fs::path>> rename_to_deleted();
  // File descriptors to fsync so this (inactive) segment is durable.
  std::vector<std::shared_ptr<FileHandle>> files_to_sync();

  TimestampOffset max_timestamp_so_far() const { return max_ts_; }
  // Largest record timestamp, or the .log's mtime when no batch has one.
  int64_t largest_timestamp() const;
  // For tests and the loader.
  OffsetIndex& offset_index() { return offset_index_; }
  TimeIndex& time_index() { return time_index_; }
  // Kafka's updateTxnIndex and collectAbortedTxns go through it.
  TransactionIndex& txn_index() { return txn_index_; }
  const TransactionIndex& txn_index() const { return txn_index_; }
  std::error_code ensure_indexes();

 private:
  Segment() = default;
  static Result<std::unique_ptr<Segment>> create_files(const fs::path& dir, int64_t base_offset,
                                                       const LogConfig& config, int64_t now_ms);
  Result<std::optional<BatchLocation>> translate_once(int64_t offset, bool& index_suspect);
  Result<std::vector<uint8_t>> read_batch_bytes(int64_t position, size_t size);
  Result<std::optional<TimestampAndOffset>> search_records(const BatchHeader& h, int64_t position, int64_t ts,
                                                           int64_t starting_offset, bool exact_match);
  // The index entries (if due) for the batch `h` at `position`, after the
  // batches before it were indexed.
  std::error_code index_batch(const BatchHeader& h, int64_t position);
  std::error_code trim_log_file();
  void load_rolling_timestamp();

  fs::path dir_;
  int64_t base_offset_ = 0;
  std::shared_ptr<FileHandle> log_;
  int64_t size_ = 0;  // bytes of valid batches; the file may be longer when preallocated
  OffsetIndex offset_index_;
  TimeIndex time_index_;
  TransactionIndex txn_index_;
  LogConfig config_;
  int64_t offset_limit_ = INT64_MAX;
  bool indexes_checked_ = false;
  bool indexes_rebuilt_ = false;
  TimestampOffset max_ts_;  // largest batch max timestamp and that batch's last offset
  std::optional<int64_t> rolling_timestamp_;
  int64_t created_ms_ = 0;
  int64_t roll_jitter_ms_ = 0;
};

}  // namespace runnel::storage
