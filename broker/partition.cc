#include "broker/partition.h"

#include <unistd.h>

#include "broker/logging.h"
#include "protocol/records/batch_reader.h"

namespace runnel::broker {

Partition::~Partition() { log_->set_producer_snapshot_source(nullptr); }

std::error_code Partition::replay_producers(int64_t from, int64_t to) {
  // Batch headers only, read through the log in chunks of whole batches so
  // memory stays bounded.
  constexpr int64_t kChunk = 1 << 20;
  int64_t offset = from;
  protocol::Bytes buf;
  while (offset < to) {
    auto read = log_->read(offset, kChunk, to, true);
    if (!read) return read.error();
    const auto& region = read->records;
    if (region.length <= 0) break;
    buf.resize(static_cast<size_t>(region.length));
    ssize_t n = ::pread(region.fd, buf.data(), buf.size(), region.offset);
    if (n != static_cast<ssize_t>(buf.size())) return std::error_code(n < 0 ? errno : EIO, std::generic_category());
    protocol::records::BatchIterator it(buf);
    int64_t next = offset;
    while (auto b = it.next()) {
      const auto& h = b->header;
      if (h.producer_id >= 0 && !h.is_control()) producers_.update(h, h.base_offset, h.max_timestamp);
      next = h.last_offset() + 1;
    }
    if (next <= offset) break;  // no progress: nothing more to read
    offset = next;
  }
  return {};
}

std::error_code Partition::load_producer_state(int64_t now_ms, int64_t expiration_ms) {
  producer_expiration_ms_ = expiration_ms;
  producers_.clear();
  const auto& dir = log_->dir();
  const int64_t start = log_->log_start_offset();
  const int64_t end = log_->log_end_offset();
  // Kafka's truncateAndReload: a snapshot above the log end describes
  // batches the log no longer holds, and one at or below the log start is
  // not needed.
  if (auto ec = storage::delete_producer_snapshots_after(dir, end)) return ec;
  if (auto ec = storage::delete_producer_snapshots_before(dir, start + 1)) return ec;

  // The latest snapshot that reads back whole; a corrupt one is deleted
  // and the next older one tried.
  int64_t loaded_at = start;
  bool loaded = false;
  auto snapshots = storage::list_producer_snapshots(dir);
  for (auto it = snapshots.rbegin(); it != snapshots.rend() && !loaded; ++it) {
    auto entries = storage::read_producer_snapshot(dir, *it);
    if (!entries) {
      if (entries.error() != storage::StorageErrc::corrupt_checkpoint) return entries.error();
      RLOG_WARN("%s-%d: producer snapshot at offset %lld is corrupt; deleting it", topic_.c_str(), index_,
                static_cast<long long>(*it));
      if (auto ec = storage::delete_producer_snapshot(dir, *it)) return ec;
      continue;
    }
    for (const auto& e : *entries)
      if (now_ms - e.timestamp < expiration_ms) producers_.load(e);
    loaded_at = *it;
    loaded = true;
  }

  // Kafka's rebuildProducerState: replay what follows, taking snapshots at
  // the last two segments' bases on the way and one at the log end, so the
  // next start (and a truncation) need not replay it again. Unlike Kafka,
  // a log without any snapshot is replayed even after a clean shutdown:
  // Kafka skips that for logs older than idempotence, but Runnel's older
  // data dirs hold idempotent batches and no snapshots.
  auto bases = log_->segment_base_offsets();
  std::vector<int64_t> snapshot_at;
  if (bases.size() >= 2) snapshot_at.push_back(bases[bases.size() - 2]);
  if (!bases.empty()) snapshot_at.push_back(bases.back());
  snapshot_at.push_back(end);
  int64_t at = loaded_at;
  for (int64_t target : snapshot_at) {
    if (target <= at) continue;
    if (auto ec = replay_producers(at, target)) return ec;
    at = target;
    auto entries = producers_.snapshot_entries(now_ms, expiration_ms);
    if (auto ec = storage::write_producer_snapshot(dir, at, entries)) return ec;
  }
  RLOG_DEBUG("%s-%d: producer state from %s at %lld, replayed to %lld: %zu producer(s)", topic_.c_str(), index_,
             loaded ? "snapshot" : "log start", static_cast<long long>(loaded_at), static_cast<long long>(end),
             producers_.size());

  log_->set_producer_snapshot_source(
      [this](int64_t at_ms) { return producers_.snapshot_entries(at_ms, producer_expiration_ms_); });
  return {};
}

}  // namespace runnel::broker
