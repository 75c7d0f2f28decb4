// Log: compaction for cleanup.policy=compact (Kafka's LogCleaner, Cleaner
// and LogCleanerManager), one bounded pass at a time.
//
// Ranges. [log start, first dirty) was compacted before (first dirty is the
// cleaner checkpoint); [first dirty, first uncleanable) is the dirty part a
// pass reads. First uncleanable is the lowest of the active segment's base,
// the high watermark, the first offset of an undecided transaction (so the
// last stable offset, as Kafka's), and (min.compaction.lag.ms) the base of
// the first dirty segment holding a record newer than now - the lag.
//
// When. cleanable bytes / (clean + cleanable bytes) > min.cleanable.dirty.ratio,
// or max.compaction.lag.ms has passed for the first batch of a dirty segment
// and there are cleanable bytes. Sizes count whole segments, as Kafka does.
//
// A pass. 1) Map every key of the dirty range to its last offset, up to
// max_map_keys / max_dirty_bytes; where that stops is the pass's end offset.
// 2) Every segment below the end offset is rewritten, in groups whose total
// size fits segment.bytes: a record stays if no later record has its key
// (offset >= the map's) and it has a value or is a tombstone whose batch's
// delete horizon has not passed. A batch with a tombstone gets a delete
// horizon (now + delete.retention.ms) the first time it is cleaned:
// attribute bit 6 set and the horizon in baseTimestamp, as in Kafka 3.1+.
// Records without a key go (Kafka drops them too). A batch of an aborted
// transaction (its producer's .txnindex entry spans the batch: the log's
// collect_aborted_txns over the range, whose markers may lie past it) is no
// key's latest record and its records go, as Kafka's
// cleaner discards them. A transaction marker goes as Kafka's cleaner lets
// it go, in two steps: once no batch of its transaction is left before it
// (CleanedTransactions: none since its producer's previous marker, over the
// whole pass, which reads from the log's first segment), the pass writing it
// sets its delete horizon; a pass after the horizon removes it, and its
// .txnindex entry with it. A marker that would end its group's output stays.
// A batch losing nothing is copied byte for byte; one losing
// records is rebuilt with the same baseOffset, lastOffsetDelta, leader
// epoch, producer fields, flags and codec, so offsets never change; one
// losing every record (or empty already) goes, except the group's last
// batch, which stays as an empty batch so that the output covers the group's
// whole offset range (the loader relies on that to finish a swap), and an
// active producer's last batch (Log::active_producers, taken when the pass
// starts), which stays, emptied if need be, as Kafka's RETAIN_EMPTY keeps
// it: producer state rebuilt from the log then still has the producer's
// sequence and epoch. An active producer's last marker is not removed.
// Aborted transactions: the output's .txnindex holds every entry of the
// segments it replaces but those whose ABORT marker went.
// 3) The swap, crash-safe like Kafka's replaceSegments: write
// <base>.log.cleaned (and <base>.txnindex.cleaned if there are entries) and
// fsync them; rename the .txnindex then the .log to .swap and fsync the dir
// (the .log.swap is the commit point); rename the replaced segments to
// *.deleted; rename the .txnindex.swap, then the .log.swap, to their final
// names. The new segment's other indexes are rebuilt from it on open. After
// a crash the loader (recover_swap_files) finishes a swap whose .log.swap
// exists (deleting the segments it covers) and drops a .cleaned and a
// .swap without a .log.swap, which leaves the old segments untouched.
//
// Locking, as Kafka's cleaner: the log's mutex is held only to take a
// snapshot of the segments below the active one (their files stay open
// through it, whatever retention deletes meanwhile) and for each group's
// swap. The map and the .cleaned files are built without it, so appends and
// fetches go on. Before a swap the pass checks, under the mutex, that the
// log start offset and every segment it read are as it found them; if a
// DeleteRecords, retention or truncation changed them, it drops its output
// and the next pass starts over.
#include <fcntl.h>

#include <algorithm>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/control_record.h"
#include "storage/log.h"

namespace runnel::storage {

namespace {

namespace rec = protocol::records;
using KeyMap = std::unordered_map<std::string, int64_t>;

std::string key_of(const rec::Record& r) { return {reinterpret_cast<const char*>(r.key->data()), r.key->size()}; }

fs::path with_suffix(const fs::path& p, const char* suffix) { return fs::path(p.string() + suffix); }

// Sets the delete-horizon attribute of a built batch and seals it again.
void set_delete_horizon_bit(protocol::Bytes& batch) {
  uint16_t attributes = static_cast<uint16_t>((batch[rec::kAttributesOffset] << 8) | batch[rec::kAttributesOffset + 1]);
  attributes |= rec::kDeleteHorizonBit;
  batch[rec::kAttributesOffset] = static_cast<uint8_t>(attributes >> 8);
  batch[rec::kAttributesOffset + 1] = static_cast<uint8_t>(attributes);
  store_be32(batch.data() + rec::kCrcOffset, rec::compute_batch_crc(batch));
}

rec::BatchSpec spec_like(const BatchHeader& h) {
  rec::BatchSpec spec;
  spec.base_offset = h.base_offset;
  spec.partition_leader_epoch = h.partition_leader_epoch;
  spec.compression = h.compression();
  spec.log_append_time = h.log_append_time();
  spec.transactional = h.is_transactional();
  spec.last_offset_delta = h.last_offset_delta;
  spec.producer_id = h.producer_id;
  spec.producer_epoch = h.producer_epoch;
  spec.base_sequence = h.base_sequence;
  return spec;
}

// Kafka's CleanedTransactionMetadata, as far as the cleaner needs it: which
// transactional data batches belong to an aborted transaction.
class AbortedBatches {
 public:
  explicit AbortedBatches(const std::vector<AbortedTxn>& txns) {
    for (const AbortedTxn& t : txns) by_producer_[t.producer_id].emplace_back(t.first_offset, t.last_offset);
  }
  bool contains(const BatchHeader& h) const {
    if (!h.is_transactional() || h.is_control()) return false;
    auto it = by_producer_.find(h.producer_id);
    if (it == by_producer_.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const auto& range) { return range.first <= h.base_offset && h.base_offset <= range.second; });
  }

 private:
  std::unordered_map<int64_t, std::vector<std::pair<int64_t, int64_t>>> by_producer_;
};

// Kafka's CleanedTransactionMetadata, for the markers: whether a marker's
// transaction still has a batch in the log before it. Batches are fed in
// offset order from the log's first segment, so every batch of a
// transaction is seen before its marker; a marker closes its producer's
// transaction, committed or aborted alike.
class CleanedTransactions {
 public:
  void on_data_batch(const BatchHeader& h) {
    if (h.is_transactional() && h.producer_id >= 0) open_.insert(h.producer_id);
  }
  // Whether the marker may go (once its delete horizon has passed).
  bool on_marker(const BatchHeader& h) { return h.producer_id >= 0 && open_.erase(h.producer_id) == 0; }

 private:
  std::unordered_set<int64_t> open_;  // producers with a batch seen since their last marker
};

// A marker with its delete horizon set: its records' timestamps kept, the
// horizon in baseTimestamp (attribute bit 6), as Kafka's filterTo rewrites it.
Result<protocol::Bytes> with_delete_horizon(const BatchHeader& h, ByteView batch_bytes, int64_t horizon,
                                            size_t max_decompressed_bytes) {
  rec::BatchRecordReader reader(batch_bytes, max_decompressed_bytes);
  std::vector<rec::Record> records;
  rec::Record r;
  while (reader.next(r)) {
    r.timestamp_delta = h.base_timestamp + r.timestamp_delta - horizon;
    records.push_back(r);
  }
  if (!reader.status().ok() || records.empty()) return StorageErrc::corrupt_record;
  rec::BatchSpec spec = spec_like(h);
  spec.control = true;
  spec.base_timestamp = horizon;
  spec.max_timestamp = h.max_timestamp;
  protocol::Bytes batch = rec::build_batch(spec, records);
  set_delete_horizon_bit(batch);
  return batch;
}

// Kafka's empty batch (DefaultRecordBatch.writeEmptyHeader): offsets and producer fields only.
protocol::Bytes empty_batch(const BatchHeader& h) {
  rec::BatchSpec spec = spec_like(h);
  spec.compression = rec::Compression::none;
  spec.base_timestamp = h.max_timestamp;
  spec.max_timestamp = h.max_timestamp;
  return rec::build_batch(spec, {});
}

// Kafka's isBatchLastRecordOfProducer: the batch holding an active
// producer's last data offset, or, when its last write was a marker of a
// new epoch, that marker. It stays, emptied if need be, so that producer
// state rebuilt from the log keeps the producer's sequence and epoch.
bool is_last_of_active_producer(const BatchHeader& h, const ActiveProducers::Map& active) {
  if (h.producer_id < 0) return false;
  auto it = active.find(h.producer_id);
  if (it == active.end()) return false;
  if (it->second.last_data_offset) return h.last_offset() == *it->second.last_data_offset;
  return h.is_control() && h.producer_epoch == it->second.producer_epoch;
}

}  // namespace

// A segment below the active one as the pass found it. Inactive segments
// never grow, and the open file keeps its bytes readable after a delete.
struct SegmentSnapshot {
  int64_t base_offset = 0;
  int64_t size = 0;
  int64_t limit = 0;  // the next segment's base: every offset here is below it
  uint64_t segment_id = 0;  // Segment::id(): the same segment object
  std::shared_ptr<FileHandle> file;
  std::vector<AbortedTxn> aborted_txns;  // its .txnindex
};

namespace {

// Calls on_batch(header, bytes, stop) for each batch of `s` until it sets
// `stop` or returns an error; a batch that does not scan is corrupt_record.
template <class OnBatch>
std::error_code scan_batches(const SegmentSnapshot& s, OnBatch&& on_batch) {
  BatchScanner scan(s.file->fd(), 0, s.size, s.base_offset, s.limit - 1);
  for (bool stop = false; !stop;) {
    auto next = scan.next();
    if (!next) return next.error();
    if (!*next) return scan.problem() == BatchProblem::end ? std::error_code() : StorageErrc::corrupt_record;
    if (auto ec = on_batch(**next, scan.batch(), stop)) return ec;
  }
  return {};
}

struct GroupOutput {
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  int64_t records_removed = 0;
  std::vector<int64_t> removed_markers;  // offsets of the markers that went
};

// Writes the cleaned form of `segments` (consecutive, inactive) to `out_path`, fsynced.
Result<GroupOutput> rewrite_group(std::span<const SegmentSnapshot> segments, const KeyMap& map,
                                  const AbortedBatches& aborted, CleanedTransactions& txns,
                                  const ActiveProducers::Map& active, int64_t now, const LogConfig& config,
                                  const CleanerOptions& options, const fs::path& out_path) {
  auto out = FileHandle::open(out_path, O_RDWR | O_CREAT | O_TRUNC);
  if (!out) return out.error();
  GroupOutput stats;
  protocol::Bytes buf;
  auto write_buf = [&]() -> std::error_code {
    if (auto ec = pwrite_all(out->fd(), buf.data(), buf.size(), stats.bytes_out)) return ec;
    stats.bytes_out += static_cast<int64_t>(buf.size());
    buf.clear();
    return {};
  };
  auto emit = [&](ByteView bytes) -> std::error_code {
    buf.insert(buf.end(), bytes.begin(), bytes.end());
    return buf.size() >= (1 << 20) ? write_buf() : std::error_code();
  };
  std::optional<BatchHeader> dropped_last;  // the latest batch, if it lost every record
  std::optional<protocol::Bytes> removed_marker;  // the latest batch, if a marker that went
  auto clean_batch = [&](const BatchHeader& h, ByteView batch_bytes, bool&) -> std::error_code {
    removed_marker.reset();  // a batch after it: the marker's removal stands
    const bool producer_last = is_last_of_active_producer(h, active);
    if (h.is_control()) {
      dropped_last.reset();
      bool horizon_set = h.attributes & rec::kDeleteHorizonBit;
      // Other control batches (none in a data partition today) stay as they are.
      if (!rec::read_end_txn_marker(batch_bytes, h) || !txns.on_marker(h)) return emit(batch_bytes);
      if (horizon_set && h.base_timestamp <= now && !producer_last) {
        // Gone, unless it ends the group's output (then it stays as it is).
        removed_marker.emplace(batch_bytes.begin(), batch_bytes.end());
        stats.removed_markers.push_back(h.base_offset);
        ++stats.records_removed;
        return {};
      }
      if (horizon_set) return emit(batch_bytes);
      auto marked = with_delete_horizon(h, batch_bytes, now + config.delete_retention_ms,
                                        options.max_decompressed_bytes);
      if (!marked) return marked.error();
      return emit(*marked);
    }
    txns.on_data_batch(h);
    const bool discard = aborted.contains(h);
    rec::BatchRecordReader reader(batch_bytes, options.max_decompressed_bytes);
    bool horizon_set = h.attributes & rec::kDeleteHorizonBit;
    bool retain_tombstones = !horizon_set || now < h.base_timestamp;
    std::vector<rec::Record> kept;
    bool removed = false, has_tombstone = false;
    rec::Record r;
    while (reader.next(r)) {
      int64_t offset = h.base_offset + r.offset_delta;
      bool keep = false;
      if (r.key && !discard) {
        auto it = map.find(key_of(r));
        bool latest = it == map.end() || offset >= it->second;
        keep = latest && (r.value || retain_tombstones);
      }
      if (keep) {
        has_tombstone |= !r.value;
        kept.push_back(r);
      } else {
        removed = true;
        ++stats.records_removed;
      }
    }
    if (!reader.status().ok()) return StorageErrc::corrupt_record;
    if (kept.empty()) {
      // Emptied, or empty already (an earlier pass kept it): it goes as
      // Kafka's DELETE_EMPTY, unless it is an active producer's last.
      dropped_last.reset();
      if (producer_last) return removed ? emit(empty_batch(h)) : emit(batch_bytes);
      dropped_last = h;
      return {};
    }
    dropped_last.reset();
    bool set_horizon = has_tombstone && !horizon_set;
    if (!removed && !set_horizon) return emit(batch_bytes);
    rec::BatchSpec spec = spec_like(h);
    std::vector<int64_t> times;
    for (const auto& k : kept) times.push_back(h.base_timestamp + k.timestamp_delta);
    if (set_horizon) spec.base_timestamp = now + config.delete_retention_ms;
    else if (horizon_set) spec.base_timestamp = h.base_timestamp;
    else spec.base_timestamp = times.front();
    for (size_t k = 0; k < kept.size(); ++k) kept[k].timestamp_delta = times[k] - spec.base_timestamp;
    spec.max_timestamp = h.log_append_time() ? h.max_timestamp : *std::max_element(times.begin(), times.end());
    protocol::Bytes batch = rec::build_batch(spec, kept);
    if (set_horizon || horizon_set) set_delete_horizon_bit(batch);
    return emit(batch);
  };
  for (const SegmentSnapshot& s : segments) {
    stats.bytes_in += s.size;
    if (auto ec = scan_batches(s, clean_batch)) return ec;
  }
  if (removed_marker) {
    // The group's last batch: it stays, so that the output covers the group's offsets.
    stats.removed_markers.pop_back();
    --stats.records_removed;
    if (auto ec = emit(*removed_marker)) return ec;
  }
  if (dropped_last)
    if (auto ec = emit(empty_batch(*dropped_last))) return ec;
  if (auto ec = write_buf()) return ec;
  if (auto ec = datasync_fd(out->fd())) return ec;
  return stats;
}

// Maps every key of [first_dirty, uncleanable) to its last offset, up to the
// pass's limits. Returns the offset after the last batch mapped; `full` when
// a limit (or the first uncleanable offset) stopped it inside the range.
Result<int64_t> build_offset_map(std::span<const SegmentSnapshot> segments, int64_t first_dirty,
                                 int64_t uncleanable, const AbortedBatches& aborted, const CleanerOptions& options,
                                 KeyMap& map, bool& full) {
  int64_t end = first_dirty, dirty_read = 0;
  for (const SegmentSnapshot& s : segments) {
    if (full || s.base_offset >= uncleanable) break;
    if (s.limit <= first_dirty) continue;
    auto map_batch = [&](const BatchHeader& h, ByteView batch, bool& stop) -> std::error_code {
      if (h.last_offset() < first_dirty) return {};
      if (h.last_offset() >= uncleanable) {
        full = stop = true;
        return {};
      }
      if (!h.is_control() && !aborted.contains(h)) {
        rec::BatchRecordReader reader(batch, options.max_decompressed_bytes);
        rec::Record r;
        while (reader.next(r))
          if (r.key) map[key_of(r)] = h.base_offset + r.offset_delta;
        if (!reader.status().ok()) return StorageErrc::corrupt_record;
      }
      end = h.last_offset() + 1;
      dirty_read += static_cast<int64_t>(h.total_size());
      full = stop = map.size() >= options.max_map_keys || dirty_read >= options.max_dirty_bytes;
      return {};
    };
    if (auto ec = scan_batches(s, map_batch)) return ec;
  }
  return end;
}

// The .txnindex of the group's output: every entry of the segments it
// replaces, in order, but those whose marker went. No file when there are
// none, as for any segment.
std::error_code write_cleaned_txn_index(std::span<const SegmentSnapshot> segments,
                                        const std::vector<int64_t>& removed_markers, const fs::path& path) {
  std::vector<AbortedTxn> entries;
  for (const SegmentSnapshot& s : segments)
    for (const AbortedTxn& t : s.aborted_txns)
      if (std::find(removed_markers.begin(), removed_markers.end(), t.last_offset) == removed_markers.end())
        entries.push_back(t);
  if (entries.empty()) return remove_if_exists(path);
  return TransactionIndex::write_file(path, entries);
}

}  // namespace

int64_t Log::first_dirty_offset() const {
  std::lock_guard lock(mu_);
  return std::max(first_dirty_offset_, log_start_offset_);
}

void Log::set_first_dirty_offset(int64_t offset) {
  std::lock_guard lock(mu_);
  first_dirty_offset_ = offset;
}

Result<CleanableInfo> Log::cleanable(int64_t now_ms) {
  std::lock_guard lock(mu_);
  if (closed_) return StorageErrc::closed;
  return cleanable_locked(now_ms);
}

Result<CleanableInfo> Log::cleanable_locked(int64_t t) {
  CleanableInfo info;
  int64_t first_dirty = std::max(first_dirty_offset_, log_start_offset_);
  if (first_dirty > log_end_offset_) first_dirty = log_start_offset_;  // a stale checkpoint, as Kafka resets it
  info.first_dirty_offset = first_dirty;
  int64_t uncleanable = std::min(active().base_offset(), high_watermark_);
  if (int64_t unstable = first_unstable_offset_.load(std::memory_order_relaxed); unstable >= 0)
    uncleanable = std::min(uncleanable, unstable);
  std::optional<int64_t> first_batch_ts;
  for (size_t i = floor_segment(first_dirty); i + 1 < segments_.size(); ++i) {
    // Known without opening the segment's files, once read: the cleaner
    // asks every tick, and must not keep idle segments open.
    Segment& s = *segments_[i];
    if (config_.min_compaction_lag_ms > 0 && s.largest_timestamp() > t - config_.min_compaction_lag_ms)
      uncleanable = std::min(uncleanable, s.base_offset());
    if (auto ts = s.first_batch_timestamp(); ts && *ts > 0)
      first_batch_ts = std::min(first_batch_ts.value_or(INT64_MAX), *ts);
  }
  info.first_uncleanable_offset = std::max(uncleanable, first_dirty);
  for (size_t i = 0; i < segments_.size(); ++i) {
    const Segment& s = *segments_[i];
    int64_t end = i + 1 < segments_.size() ? segments_[i + 1]->base_offset() : INT64_MAX;
    if (s.base_offset() < first_dirty) info.clean_bytes += s.size();
    if (end > first_dirty && s.base_offset() < info.first_uncleanable_offset) info.cleanable_bytes += s.size();
  }
  int64_t total = info.clean_bytes + info.cleanable_bytes;
  info.cleanable_ratio = total > 0 ? static_cast<double>(info.cleanable_bytes) / static_cast<double>(total) : 0.0;
  if (config_.max_compaction_lag_ms < INT64_MAX && first_batch_ts)
    info.need_compaction_now = t - *first_batch_ts > config_.max_compaction_lag_ms;
  info.due = config_.cleanup_compact && info.cleanable_bytes > 0 &&
             (info.need_compaction_now || info.cleanable_ratio > config_.min_cleanable_dirty_ratio);
  return info;
}

Result<CleanResult> Log::clean(int64_t t, const CleanerOptions& options, bool force) {
  CleanResult result;
  std::vector<SegmentSnapshot> snapshot;
  LogConfig config;
  int64_t first_dirty, uncleanable, log_start;
  {
    std::lock_guard lock(mu_);
    if (closed_) return StorageErrc::closed;
    if (failure_) return StorageErrc::log_dir_failed;
    if (!config_.cleanup_compact || cleaning_) return result;
    auto info = cleanable_locked(t);
    if (!info) return info.error();
    if (!(info->due || (force && info->cleanable_bytes > 0))) return result;
    first_dirty = info->first_dirty_offset, uncleanable = info->first_uncleanable_offset;
    for (size_t i = 0; i + 1 < segments_.size(); ++i) {
      // The pass reads them through the descriptors held here.
      if (auto ec = segments_[i]->open_files()) return ec;
      snapshot.push_back({segments_[i]->base_offset(), segments_[i]->size(), segments_[i + 1]->base_offset(),
                          segments_[i]->id(), segments_[i]->log_file(), segments_[i]->txn_index().all()});
    }
    config = config_;
    log_start = log_start_offset_;
    cleaning_ = true;
  }
  struct EndPass {
    Log& log;
    ~EndPass() {
      std::lock_guard lock(log.mu_);
      log.cleaning_ = false;
    }
  } end_pass{*this};
  // An error on a log closed (a deleted topic) or changed meanwhile only means the pass is stale.
  auto failed = [&](std::error_code ec, size_t from, size_t to) -> Result<CleanResult> {
    std::lock_guard lock(mu_);
    if (closed_ || !find_unchanged(snapshot, from, to, log_start)) return result;
    return ec == StorageErrc::corrupt_record ? ec : fail(ec);
  };

  // 1. The offset map of the dirty range.
  KeyMap map;
  bool full = false;
  // Every aborted transaction with data in what the pass may rewrite: all
  // are decided (below the first unstable offset), their entries written.
  auto aborted_txns = collect_aborted_txns(log_start, uncleanable);
  if (!aborted_txns) return failed(aborted_txns.error(), 0, snapshot.size());
  const AbortedBatches aborted(*aborted_txns);
  auto mapped = build_offset_map(snapshot, first_dirty, uncleanable, aborted, options, map, full);
  if (!mapped) return failed(mapped.error(), 0, snapshot.size());
  int64_t end = *mapped;
  if (end == first_dirty) return result;
  // The whole dirty range was mapped: the next pass starts where it ended.
  if (!full) end = uncleanable;

  // 2 and 3. Rewrite and swap every segment below `end`, group by group.
  size_t n_clean = 0;
  while (n_clean < snapshot.size() && snapshot[n_clean].base_offset < end) ++n_clean;
  result.end_offset = end;
  CleanedTransactions txns;  // over every group, from the log's first segment
  // Taken after the first uncleanable offset: a producer's later write lies past it.
  const ActiveProducers::Map active = active_producers_.snapshot();
  for (size_t first = 0; first < n_clean;) {
    size_t last = first + 1;
    int64_t group_bytes = snapshot[first].size;
    int64_t base = snapshot[first].base_offset;
    while (last < n_clean && group_bytes + snapshot[last].size <= config.segment_bytes &&
           snapshot[last].limit - 1 - base <= INT32_MAX) {
      group_bytes += snapshot[last].size;
      ++last;
    }
    size_t count = last - first;
    result.segments_in += static_cast<int>(count);
    if (group_bytes == 0) {
      first = last;
      result.segments_out += static_cast<int>(count);
      continue;
    }
    fs::path cleaned = with_suffix(Segment::log_path(dir_, base), Segment::kCleanedSuffix);
    fs::path txn_cleaned = with_suffix(Segment::txn_index_path(dir_, base), Segment::kCleanedSuffix);
    auto group = std::span<const SegmentSnapshot>(snapshot).subspan(first, count);
    auto out = rewrite_group(group, map, aborted, txns, active, t, config, options, cleaned);
    std::error_code txn_ec = out ? write_cleaned_txn_index(group, out->removed_markers, txn_cleaned) : std::error_code();
    if (!out || txn_ec) {
      (void)remove_if_exists(cleaned);
      (void)remove_if_exists(txn_cleaned);
      return failed(out ? txn_ec : out.error(), first, n_clean);
    }
    if (options.stop_after == CleanerOptions::StopAfter::cleaned_written) return result;
    if (options.before_swap) options.before_swap();
    std::lock_guard lock(mu_);
    auto at = find_unchanged(snapshot, first, n_clean, log_start);
    if (closed_ || failure_ || !config_.cleanup_compact || !at) {
      // Stale: the old segments stay, a later pass starts over.
      (void)remove_if_exists(cleaned);
      (void)remove_if_exists(txn_cleaned);
      return result;
    }
    result.bytes_in += out->bytes_in;
    result.bytes_out += out->bytes_out;
    result.records_removed += out->records_removed;
    bool stopped = false;
    if (auto ec = replace_with_cleaned(*at, count, base, snapshot[last - 1].limit, options, stopped))
      return fail(ec);
    if (stopped) return result;
    ++result.segments_out;
    first = last;
  }
  std::lock_guard lock(mu_);
  first_dirty_offset_ = end;
  result.cleaned = true;
  return result;
}

std::optional<size_t> Log::find_unchanged(const std::vector<SegmentSnapshot>& snapshot, size_t from, size_t to,
                                          int64_t log_start) const {
  if (log_start_offset_ != log_start || from >= to) return std::nullopt;
  auto first = std::find_if(segments_.begin(), segments_.end(),
                            [&](const auto& s) { return s->id() == snapshot[from].segment_id; });
  auto at = first;
  // An aborted txn appended meanwhile (a follower's marker in a segment it
  // rolled past) would be missing from the output's .txnindex.
  for (size_t i = from; i < to; ++i, ++at)
    if (at == segments_.end() || (*at)->id() != snapshot[i].segment_id || (*at)->size() != snapshot[i].size ||
        (*at)->txn_index().all().size() != snapshot[i].aborted_txns.size())
      return std::nullopt;
  // The segment after them is still there, so their offset range is as it was.
  if (at == segments_.end() || (*at)->base_offset() != snapshot[to - 1].limit) return std::nullopt;
  return static_cast<size_t>(first - segments_.begin());
}

// The swap of one group, under the log's mutex: `count` segments from
// segments_[first] give way to <base>.log.cleaned.
std::error_code Log::replace_with_cleaned(size_t first, size_t count, int64_t base, int64_t limit,
                                          const CleanerOptions& options, bool& stopped) {
  using Stop = CleanerOptions::StopAfter;
  fs::path log = Segment::log_path(dir_, base), txn = Segment::txn_index_path(dir_, base);
  fs::path cleaned = with_suffix(log, Segment::kCleanedSuffix), swap = with_suffix(log, Segment::kSwapSuffix);
  fs::path txn_cleaned = with_suffix(txn, Segment::kCleanedSuffix), txn_swap = with_suffix(txn, Segment::kSwapSuffix);
  stopped = true;
  std::error_code missing;
  bool has_txn = fs::exists(txn_cleaned, missing);
  // Before the commit point, so that a .log.swap always has its .txnindex.swap.
  if (has_txn)
    if (auto ec = rename_path(txn_cleaned, txn_swap)) return ec;
  if (auto ec = rename_path(cleaned, swap)) return ec;
  if (auto ec = fsync_dir(dir_)) return ec;
  if (options.stop_after == Stop::swap_renamed) return {};
  // The cleaned segment keeps the base offset, and with it its snapshot.
  if (auto ec = remove_segments(first, count, /*delay=*/true, base)) return ec;
  if (options.stop_after == Stop::old_deleted) return {};
  // Before the .log: a .txnindex.swap left without its .log.swap would be
  // taken for a swap that never committed.
  if (has_txn)
    if (auto ec = rename_path(txn_swap, txn)) return ec;
  if (auto ec = rename_path(swap, log)) return ec;
  if (auto ec = fsync_dir(dir_)) return ec;
  auto seg = Segment::open_existing(dir_, base, config_, now());
  if (!seg) return seg.error();
  (*seg)->set_offset_limit(limit);
  if (auto ec = (*seg)->on_become_inactive()) return ec;
  // Its indexes were rebuilt here: synced now, as Kafka's cleaner flushes
  // the cleaned segment, so a power loss cannot leave them zero-filled
  // behind a .log that survived.
  for (const auto& f : (*seg)->files_to_sync())
    if (auto ec = datasync_fd(f->fd())) return ec;
  segments_.insert(segments_.begin() + static_cast<ptrdiff_t>(first), std::move(*seg));
  stopped = false;
  return {};
}

// Log::load, before anything else: finishes or rolls back a swap that a
// crash interrupted (Kafka's LogLoader on .swap and .cleaned files).
std::error_code Log::recover_swap_files() {
  std::vector<int64_t> swaps;
  std::vector<std::pair<int64_t, fs::path>> logs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::string name = entry.path().filename().string();
    if (name.ends_with(Segment::kCleanedSuffix)) {
      if (auto rec = remove_if_exists(entry.path())) return rec;
    } else if (name.ends_with(std::string(".log") + Segment::kSwapSuffix) && name.size() == 20 + 9) {
      swaps.push_back(std::stoll(name.substr(0, 20)));
    } else if (name.ends_with(".log") && name.size() == 24) {
      logs.emplace_back(std::stoll(name.substr(0, 20)), entry.path());
    }
  }
  if (ec) return ec;
  for (int64_t base : swaps) {
    fs::path log = Segment::log_path(dir_, base), swap = with_suffix(log, Segment::kSwapSuffix);
    auto f = FileHandle::open(swap, O_RDONLY);
    if (!f) return f.error();
    auto size = file_size(f->fd());
    if (!size) return size.error();
    BatchScanner scan(f->fd(), 0, *size, base, INT64_MAX);
    int64_t next_offset = base;
    for (;;) {
      auto b = scan.next();
      if (!b) return b.error();
      if (!*b) break;
      next_offset = (*b)->last_offset() + 1;
    }
    if (next_offset == base) {  // nothing usable: keep the old segments
      if (auto rec = remove_if_exists(swap)) return rec;
      continue;
    }
    for (const auto& [b, path] : logs) {
      if (b < base || b >= next_offset) continue;
      for (const auto& p :
           {path, Segment::index_path(dir_, b), Segment::time_index_path(dir_, b), Segment::txn_index_path(dir_, b)})
        if (auto rec = remove_if_exists(p)) return rec;
    }
    for (const auto& p :
         {Segment::index_path(dir_, base), Segment::time_index_path(dir_, base), Segment::txn_index_path(dir_, base)}) {
      fs::path idx_swap = with_suffix(p, Segment::kSwapSuffix);
      if (fs::exists(idx_swap, ec)) {
        if (auto rec = rename_path(idx_swap, p)) return rec;
      }
    }
    if (auto rec = rename_path(swap, log)) return rec;
  }
  // Index .swap files left without their .log.swap belong to nothing.
  for (const auto& entry : fs::directory_iterator(dir_, ec))
    if (entry.path().filename().string().ends_with(Segment::kSwapSuffix))
      if (auto rec = remove_if_exists(entry.path())) return rec;
  if (!swaps.empty())
    if (auto rec = fsync_dir(dir_)) return rec;
  return ec;
}

}  // namespace runnel::storage
