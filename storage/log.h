// A partition's log: the segments in <log dir>/<topic>-<partition>/, plus
// the partition's offsets (log start offset, high watermark, log end offset,
// recovery point) and its leader epoch cache. Kafka's UnifiedLog/LocalLog.
//
//   <partition dir>/<base offset>.log/.index/.timeindex   segments (segment.h)
//                   <base offset>.txnindex               aborted transactions (transaction_index.h)
//                   leader-epoch-checkpoint              epoch -> first offset (checkpoint.h)
//                   partition.metadata                   topic id (partition_metadata.h)
//                   <offset>.snapshot                    producer state (producer_snapshot.h)
//
// Offsets: log start offset <= high watermark <= log end offset. The log
// stores the high watermark, which bounds reads, retention and the
// cleaner, but never moves it on append: the partition does
// (replication/partition.h), once the ISR has the records. On open it is
// the log end offset (everything recovered was committed). The
// recovery point is the offset below which everything is fsynced; on an
// unclean open, segments from the one holding it are re-validated.
//
// Threads. Every method is safe to call from any thread: an internal mutex
// serialises them. The broker calls append() from one strand per partition,
// so that mutex is normally uncontended; retention, flush and checkpoint
// passes come from the log manager's thread; a compaction pass holds the
// mutex only for each segment swap (log_cleaner.cc). sync() never holds the log's
// mutex while it fsyncs, so appends continue during a sync, and any number
// of threads may wait in sync() at once (group commit, group_commit.h).
// Read results pin the segment file, so a segment deleted meanwhile stays
// readable until the last FileRegion using it is dropped.
//
// Errors: expected outcomes (offset out of range, bad input, I/O errors) are
// error values. After an I/O error on write or sync the log is failed: every
// later append and sync returns the error, and its log dir goes offline, as
// Kafka takes it offline (log_dir_failure.h). A failed open() leaves no Log
// behind and writes nothing more to the files it found.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "base/clock.h"
#include "protocol/codec/types.h"
#include "storage/errors.h"
#include "storage/active_producers.h"
#include "storage/group_commit.h"
#include "storage/leader_epoch_cache.h"
#include "storage/log_config.h"
#include "storage/log_dir_failure.h"
#include "storage/producer_snapshot.h"
#include "storage/segment.h"

namespace runnel::storage {

using runnel::Clock;  // the log reads its wall_ms(): segment ages, retention, flush.ms

struct LogOptions {
  int64_t recovery_point = 0;    // from recovery-point-offset-checkpoint
  int64_t log_start_offset = 0;  // from log-start-offset-checkpoint
  bool clean_shutdown = false;   // the log dir had .kafka_cleanshutdown
  const Clock* clock = nullptr;  // defaults to Clock::system()
  int64_t cleaner_checkpoint = 0;  // from cleaner-offset-checkpoint: first dirty offset
  std::optional<protocol::Uuid> topic_id;  // checked against / written to partition.metadata
  // The health of the log dir holding this log: an I/O error here takes the
  // dir offline, and an offline dir fails this log (log_dir_failure.h).
  std::shared_ptr<LogDirFailure> dir_failure;
};

struct AppendInfo {
  int64_t base_offset = 0;
  int64_t last_offset = 0;
  int64_t log_append_time_ms = kNoTimestamp;  // set only with message.timestamp.type=LogAppendTime
  int64_t log_start_offset = 0;
  // The base offset of the segment this append rolled to, -1 if none: the
  // producer state as of that offset belongs in a snapshot there
  // (replication/partition.cc writes it), so a restart replays only the
  // segments after it.
  int64_t rolled_at = -1;
};

// One compaction pass's limits (Kafka's log.cleaner.* settings), and a test hook.
struct CleanerOptions {
  size_t max_map_keys = 1 << 20;           // keys of the dirty range remembered per pass
  int64_t max_dirty_bytes = 64LL << 20;    // dirty bytes read per pass (at least one batch)
  size_t max_decompressed_bytes = 256 << 20;
  // Tests: stop right after this step, leaving the files as a crash would.
  enum class StopAfter : uint8_t { never, cleaned_written, swap_renamed, old_deleted } stop_after = StopAfter::never;
  // Tests: called once a group's .cleaned file is written, before its swap
  // takes the log's mutex, so a test can act on the log mid-pass.
  std::function<void()> before_swap;
};

struct SegmentSnapshot;  // log_cleaner.cc

// What the cleaner sees in a log (Kafka's LogToClean).
struct CleanableInfo {
  int64_t first_dirty_offset = 0;
  int64_t first_uncleanable_offset = 0;
  int64_t clean_bytes = 0;
  int64_t cleanable_bytes = 0;
  double cleanable_ratio = 0;
  bool need_compaction_now = false;  // max.compaction.lag.ms passed
  bool due = false;                  // the cleaner would clean it now
};

struct CleanResult {
  bool cleaned = false;
  int64_t end_offset = 0;  // the next pass starts here (cleaner checkpoint)
  int segments_in = 0, segments_out = 0;
  int64_t bytes_in = 0, bytes_out = 0;
  int64_t records_removed = 0;
};

struct LogReadInfo {
  protocol::FileRegion records;  // whole batches; fd -1 and length 0 when there are none
  int64_t high_watermark = 0;
  int64_t log_start_offset = 0;
  int64_t log_end_offset = 0;
};

class Log {
 public:
  // ListOffsets' special timestamps.
  static constexpr int64_t kLatestTimestamp = -1;
  static constexpr int64_t kEarliestTimestamp = -2;
  static constexpr int64_t kMaxTimestamp = -3;
  static constexpr int64_t kEarliestLocalTimestamp = -4;

  // Loads (and if unclean, recovers) the log in `dir`, creating it if absent.
  static Result<std::unique_ptr<Log>> open(const fs::path& dir, const LogConfig& config, LogOptions options);
  ~Log();
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // Appends validated RecordBatch v2 bytes (one or more whole batches) as
  // leader in `leader_epoch` (-1: none). Rewrites each batch's baseOffset
  // and partitionLeaderEpoch in place (and for LogAppendTime its timestamp
  // and CRC), then writes the bytes as they are.
  Result<AppendInfo> append(std::span<uint8_t> batches, int32_t leader_epoch);

  // Appends batches exactly as a leader stored them (Kafka's
  // appendAsFollower): offsets, leader epochs, timestamps and CRCs are kept,
  // so replicas' segment files are byte-identical. The first batch must
  // start at or after the log end (a compacted leader's offsets may skip),
  // every later one after its predecessor; each batch's CRC is checked.
  // The leader epoch cache learns every epoch the batches carry.
  // AppendInfo::rolled_at is the base of the first segment it rolled to.
  // Defined in log_follower.cc.
  Result<AppendInfo> append_as_follower(std::span<const uint8_t> batches);

  // Whole batches from the one holding `offset`, up to `max_bytes` (at least
  // the first batch if `min_one_batch`), all below `max_offset` (default:
  // the high watermark). offset_out_of_range outside [log start, log end].
  Result<LogReadInfo> read(int64_t offset, int64_t max_bytes, std::optional<int64_t> max_offset = std::nullopt,
                           bool min_one_batch = true);

  // ListOffsets: the first record with timestamp >= `timestamp`, or one of
  // the special timestamps above. nullopt when no record qualifies.
  Result<std::optional<TimestampAndOffset>> offset_for_timestamp(int64_t timestamp);

  // Makes everything appended so far durable (acks=all). Any thread.
  std::error_code sync();
  // The background flush: syncs if a segment was rolled since the last
  // sync or flush.ms has passed. Any thread.
  std::error_code flush_if_due(int64_t now_ms);

  // Retention: deletes whole segments per retention.ms / retention.bytes
  // (cleanup.policy=delete) and those below the log start offset; never the
  // active segment. Also removes files whose file.delete.delay.ms passed.
  // Returns the number of segments deleted.
  Result<int> delete_old_segments();
  // Closes the files of inactive segments not used since the last call
  // (Segment::release_if_idle); returns how many segments it closed.
  int close_idle_segments();
  // DeleteRecords: advances the log start offset to `offset` (-1: the high
  // watermark) and deletes segments wholly below it. Returns the new log
  // start offset; offset_out_of_range above the high watermark.
  Result<int64_t> delete_records(int64_t offset);
  // Compaction (cleanup.policy=compact), Kafka's LogCleaner: see
  // log_cleaner.cc. cleanable() tells whether a pass is due at `now_ms`;
  // clean() runs one bounded pass if it is (or always, with `force`).
  Result<CleanableInfo> cleanable(int64_t now_ms);
  Result<CleanResult> clean(int64_t now_ms, const CleanerOptions& options = {}, bool force = false);
  // The cleaner checkpoint: offsets below it have been compacted.
  int64_t first_dirty_offset() const;
  void set_first_dirty_offset(int64_t offset);
  // Removes every batch at or after the one holding `offset` (replication).
  std::error_code truncate_to(int64_t offset);
  // Empties the log and restarts it at `offset` (a follower too far behind).
  std::error_code truncate_fully_and_start_at(int64_t offset);
  std::error_code roll();
  // Records that `epoch` starts at `start_offset` (a new leader's first offset).
  std::error_code assign_leader_epoch(int32_t epoch, int64_t start_offset);

  // Producer-state snapshots (<offset>.snapshot): the partition, which
  // owns the producer state, writes one where an append rolled
  // (AppendInfo::rolled_at) and one at the log end before a clean close.
  // The log keeps the files in step with its segments: removed segments
  // take their snapshot with them; truncation removes the snapshots it
  // leaves above the log end.
  // After a recovery point checkpoint: keeps the snapshots of the last two
  // segments and of those from the recovery point on, deletes the older
  // ones (Kafka's deleteSnapshotsAfterRecoveryPointCheckpoint).
  std::error_code delete_snapshots_after_recovery_point_checkpoint();

  // Aborted transactions (.txnindex, one per segment; Kafka's
  // updateTxnIndex and collectAbortedTransactions). The partition, which
  // owns the producer state and so knows each transaction's first offset,
  // appends an entry right after appending the ABORT marker; the log keeps
  // the files in step with their segments (retention, DeleteRecords,
  // truncation, compaction) and syncs them with the segments.
  //
  // Appends `txn` to the index of the segment holding its marker
  // (txn.last_offset): the active segment, except after a follower append
  // that rolled past the marker. offset_out_of_range if the log does not
  // hold that offset; invalid_argument if txn.last_offset is not above the
  // segment's last entry's (Kafka's check); an I/O error fails the log.
  std::error_code append_aborted_txn(const AbortedTxn& txn);
  // For a read_committed fetch (Kafka's LocalLog.collectAbortedTransactions):
  // from the segment holding start_offset (the first one if it is below
  // the log start) on, each segment's entries with last offset >=
  // start_offset and first offset < upper_bound_offset, stopping after a
  // segment whose search is complete (TxnIndexSearchResult).
  Result<std::vector<AbortedTxn>> collect_aborted_txns(int64_t start_offset, int64_t upper_bound_offset) const;
  // The base offset of the first segment whose .txnindex this open did not
  // trust, -1 if it trusted every one: segments that an unclean-shutdown
  // recovery re-validated (Kafka's LogSegment.recover resets their index)
  // and a segment whose .txnindex failed its sanity check. That segment's
  // index and every later one's are empty after open; the partition
  // rebuilds them, before any append, by replaying the log from there (or
  // from a producer snapshot before it) and calling
  // append_aborted_txn_during_rebuild for every ABORT marker it meets.
  // Set by open only.
  int64_t txn_index_rebuild_from() const;
  // The replay's append: like append_aborted_txn (the segment is the one
  // holding txn.last_offset), but a marker below txn_index_rebuild_from()
  // is skipped (its segment's index is trusted and has the entry already),
  // so the replay may start at any snapshot before that offset.
  std::error_code append_aborted_txn_during_rebuild(const AbortedTxn& txn);

  // Syncs and closes every segment, trimming the active one's files.
  std::error_code close();
  void set_config(const LogConfig& config);

  int64_t log_start_offset() const;
  int64_t log_end_offset() const;
  int64_t high_watermark() const;
  // Kafka's UnifiedLog.maybeIncrementHighWatermark: moves the high
  // watermark forward to `offset` (at most the log end offset); returns
  // whether it moved. The partition calls it, never the log itself.
  bool maybe_increment_high_watermark(int64_t offset);
  int64_t recovery_point() const;  // everything below is fsynced
  // The first offset of the oldest transaction not yet decided and
  // replicated, from the partition's producer state (-1: none). Compaction
  // stops below it, as Kafka's cleaner stops at the last stable offset: an
  // open transaction's records may yet be aborted, so they must neither
  // shadow older records of their keys nor be cleaned themselves. A
  // partition sets it to its log start before it has loaded its producers.
  void set_first_unstable_offset(int64_t offset) { first_unstable_offset_.store(offset, std::memory_order_relaxed); }
  // Each active producer's last batch, which compaction keeps; the
  // partition's producer state keeps it (ProducerStateTable::mirror_to).
  ActiveProducers& active_producers() { return active_producers_; }
  int64_t size_bytes() const;
  size_t segment_count() const;
  // Segments whose files are open (the active one always is).
  size_t open_segment_count() const;
  std::vector<int64_t> segment_base_offsets() const;
  LogConfig config() const;
  const fs::path& dir() const { return dir_; }
  std::vector<EpochEntry> leader_epochs() const;
  std::optional<int32_t> latest_epoch() const;
  // OffsetsForLeaderEpoch: (epoch, end offset), (-1, -1) if unknown.
  std::pair<int32_t, int64_t> end_offset_for_epoch(int32_t epoch) const;
  uint64_t sync_count() const { return group_commit_->sync_count(); }
  // The log dir went offline after an I/O error (in this log or another).
  bool dir_offline() const { return dir_failure_ && dir_failure_->offline(); }

  // Tests: drops every file handle without trimming or syncing, leaving the
  // files as a killed process would.
  void abandon_for_testing();

 private:
  Log() = default;
  std::error_code open_files(const LogOptions& options);  // the directory, partition.metadata, load()
  std::error_code load(const LogOptions& options);
  std::error_code recover_from(size_t first, int64_t now);
  // Load: txn_index_rebuild_from_ becomes at most `base_offset`.
  void distrust_txn_indexes_from(int64_t base_offset);
  // Load: distrusts the first segment whose .txnindex fails its sanity check.
  void check_txn_indexes();
  // Load: empties the .txnindex of every segment from txn_index_rebuild_from_ on.
  std::error_code reset_untrusted_txn_indexes();
  std::error_code append_aborted_txn_locked(const AbortedTxn& txn);
  // `rolled`, if given, is set when a new segment was made.
  std::error_code roll_locked(int64_t now, bool* rolled = nullptr);
  // What every append checks first, under the mutex: open, healthy, not empty.
  std::error_code check_appendable_locked(size_t bytes) const;
  // After an append reached the log end: the group commit learns it, and
  // the result says whether flush.messages wants a sync now.
  bool appended_locked();
  std::error_code fail(std::error_code ec);
  // After a failed open: drops every file handle, writing nothing.
  void abandon();
  int64_t now() const { return clock_->wall_ms(); }
  Segment& active() { return *segments_.back(); }
  // Index of the segment whose range holds `offset` (the last with base <= offset).
  size_t floor_segment(int64_t offset) const;
  void maybe_increment_log_start_offset(int64_t offset);
  using DeletePredicate = std::function<bool(Segment&, Segment*)>;
  Result<int> delete_segments_while(const DeletePredicate& predicate);
  // Also removes each one's producer snapshot, but the one at `keep_snapshot_at`.
  std::error_code remove_segments(size_t first, size_t count, bool delay, int64_t keep_snapshot_at = -1);
  void delete_expired_files(int64_t now);
  Result<CleanableInfo> cleanable_locked(int64_t now);
  // The cleaner (log_cleaner.cc): where snapshot[from] is now, if snapshot[from, to) and the log start
  // offset are still as the pass found them; nullopt if the log changed under the pass.
  std::optional<size_t> find_unchanged(const std::vector<SegmentSnapshot>& snapshot, size_t from, size_t to,
                                       int64_t log_start) const;
  std::error_code replace_with_cleaned(size_t first, size_t count, int64_t base, int64_t limit,
                                       const CleanerOptions& options, bool& stopped);
  std::error_code recover_swap_files();

  fs::path dir_;
  mutable std::mutex mu_;
  LogConfig config_;
  const Clock* clock_ = &Clock::system();
  std::vector<std::unique_ptr<Segment>> segments_;
  LeaderEpochCache epochs_;
  int64_t log_start_offset_ = 0;
  int64_t log_end_offset_ = 0;
  int64_t high_watermark_ = 0;
  std::atomic<int64_t> first_unstable_offset_{-1};  // set_first_unstable_offset
  ActiveProducers active_producers_;
  std::unique_ptr<GroupCommit> group_commit_;
  std::atomic<bool> roll_needs_flush_{false};
  std::atomic<int64_t> last_flush_ms_{0};
  std::error_code failure_;
  std::shared_ptr<LogDirFailure> dir_failure_;
  bool closed_ = false;
  struct PendingDelete {
    std::vector<fs::path> files;
    int64_t due_ms;
  };
  std::vector<PendingDelete> pending_deletes_;
  int64_t first_dirty_offset_ = 0;  // the cleaner checkpoint
  int64_t txn_index_rebuild_from_ = -1;
  bool cleaning_ = false;           // a pass is in progress (it holds the mutex only to swap)
};

}  // namespace runnel::storage
