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
// Open files: an inactive segment's .log descriptor and offset index map
// are opened when it is first used, its time index map only when a
// timestamp lookup (ListOffsets, a truncation) needs it, as Kafka's
// LazyIndex maps each index on its first lookup; all are closed again once
// the segment goes unused (release_if_idle, from Log::close_idle_segments).
// So a partition holds descriptors and maps for its active segment and the
// segments being read, not for every segment it has, and a consumer reading
// old segments maps one index of each, not two. Kafka keeps every .log
// open: 10,000 partitions of 100 segments need a million descriptors there.
// What the broker needs to know of a closed segment without reading it
// (size, largest timestamp, first batch timestamp) stays in memory.
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
  // With `lazy`, a segment whose indexes exist opens no file until it is
  // used (the loader's inactive segments).
  static Result<std::unique_ptr<Segment>> open_existing(const fs::path& dir, int64_t base_offset,
                                                        const LogConfig& config, int64_t now_ms, bool lazy = false);

  int64_t base_offset() const { return base_offset_; }
  int64_t size() const { return size_; }
  // Null while the segment's files are closed (see "Open files").
  const std::shared_ptr<FileHandle>& log_file() const { return log_; }
  // Tells one segment object from another across closing and reopening of
  // its files (the cleaner's check that segments did not change).
  uint64_t id() const { return id_; }
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

  // --- open files
  // Opens the .log and maps the offset index if they are closed; every
  // operation that reads or writes files calls it (or open_time_index) first.
  std::error_code open_files();
  // open_files(), and maps the time index too.
  std::error_code open_time_index();
  bool files_open() const { return log_ != nullptr; }
  // Closes the files of a segment not opened or used since the last call
  // (a second chance, as a clock cache gives), keeping what the broker
  // needs of it in memory; true if it closed them. Only for an inactive
  // segment: its indexes are trimmed, so closing writes nothing. Reads in
  // flight keep the descriptor they hold.
  bool release_if_idle();

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

  // The largest batch max timestamp and that batch's last offset.
  TimestampOffset max_timestamp_so_far() {
    load_max_timestamp();
    return max_ts_;
  }
  // Largest record timestamp, or the .log's mtime when no batch has one
  // (Kafka's LogSegment.largestTimestamp).
  int64_t largest_timestamp();
  // For tests and the loader.
  OffsetIndex& offset_index() { return offset_index_; }
  TimeIndex& time_index() { return time_index_; }
  // Kafka's updateTxnIndex and collectAbortedTxns go through it.
  TransactionIndex& txn_index() { return txn_index_; }
  const TransactionIndex& txn_index() const { return txn_index_; }
  // Opens an index and checks it before its first use since it was opened,
  // rebuilding both from the .log if it fails the check.
  std::error_code ensure_offset_index();
  std::error_code ensure_time_index();
  std::error_code ensure_indexes();  // both

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
  // max_ts_ of a segment whose time index was not checked yet.
  void load_max_timestamp();

  fs::path dir_;
  int64_t base_offset_ = 0;
  uint64_t id_ = 0;
  std::shared_ptr<FileHandle> log_;
  bool used_ = false;  // since the last release_if_idle()
  bool max_ts_loaded_ = false;  // read from a closed segment's time index
  int64_t size_ = 0;  // bytes of valid batches; the file may be longer when preallocated
  OffsetIndex offset_index_;
  TimeIndex time_index_;
  TransactionIndex txn_index_;
  LogConfig config_;
  int64_t offset_limit_ = INT64_MAX;
  bool time_index_open_ = false;  // mapped; implies log_
  bool offset_index_checked_ = false;
  bool time_index_checked_ = false;
  bool indexes_rebuilt_ = false;
  TimestampOffset max_ts_;  // largest batch max timestamp and that batch's last offset
  std::optional<int64_t> rolling_timestamp_;
  int64_t created_ms_ = 0;
  int64_t roll_jitter_ms_ = 0;
};

}  // namespace runnel::storage
