// A follower's append (Log::append_as_follower in log.h).
#include "protocol/records/batch_format.h"
#include "storage/batch_scan.h"
#include "storage/log.h"

namespace runnel::storage {

namespace records = protocol::records;

Result<AppendInfo> Log::append_as_follower(std::span<const uint8_t> batches) {
  AppendInfo info;
  bool flush_now = false;
  {
    std::lock_guard lock(mu_);
    if (auto ec = check_appendable_locked(batches.size())) return ec;
    // Everything is checked before anything is written: a bad batch from
    // the leader fails the whole fetch response's partition.
    int64_t next = log_end_offset_;
    struct Epoch {
      int32_t epoch;
      int64_t start;
    };
    std::vector<Epoch> epochs;
    std::vector<std::pair<size_t, records::BatchHeader>> framed;
    for (size_t at = 0; at < batches.size();) {
      ByteView rest(batches.data() + at, batches.size() - at);
      auto h = frame_batch(rest);
      if (!h) return StorageErrc::invalid_record;
      // A fetch may carry more than a segment; each batch must fit one.
      if (h->total_size() > static_cast<size_t>(config_.segment_bytes)) return StorageErrc::record_batch_too_large;
      if (h->base_offset < next) return StorageErrc::invalid_record;  // out of order, or below the log end
      if (records::compute_batch_crc(ByteView(rest.data(), h->total_size())) != h->crc)
        return StorageErrc::corrupt_record;
      if (h->partition_leader_epoch >= 0 && (epochs.empty() || h->partition_leader_epoch > epochs.back().epoch))
        epochs.push_back({h->partition_leader_epoch, h->base_offset});
      framed.emplace_back(at, *h);
      next = h->last_offset() + 1;
      at += h->total_size();
    }
    info.base_offset = framed.front().second.base_offset;
    info.last_offset = next - 1;
    // One batch at a time, each with the roll rule the leader applied when
    // it appended that batch, so segments start at the same offsets.
    const int64_t t = now();
    for (const auto& [at, h] : framed) {
      RollParams roll{config_.segment_ms,        config_.segment_bytes, h.max_timestamp, h.last_offset(),
                      static_cast<int64_t>(h.total_size()), t};
      if (active().should_roll(roll)) {
        bool rolled = false;
        if (auto ec = roll_locked(t, &rolled)) return fail(ec);
        if (rolled && info.rolled_at < 0) info.rolled_at = log_end_offset_;
      }
      if (auto ec = active().append(ByteView(batches.data() + at, h.total_size()))) return fail(ec);
      log_end_offset_ = h.last_offset() + 1;
    }
    for (const auto& e : epochs)
      if (auto latest = epochs_.latest_epoch(); !latest || e.epoch > *latest)
        if (auto ec = epochs_.assign(e.epoch, e.start)) return fail(ec);
    info.log_start_offset = log_start_offset_;
    flush_now = appended_locked();
  }
  if (flush_now)
    if (auto ec = sync()) return ec;
  return info;
}

}  // namespace runnel::storage
