// Kafka's UnifiedLog.lastRecordsOfActiveProducers, for the cleaner: each
// producer the partition still has state for, with the offset of its last
// data batch (none when its last write was a marker that began a new
// epoch) and its epoch. The cleaner keeps the batch holding that offset, or
// that marker, even when compaction leaves nothing of it, so a replica or a
// restart rebuilding producer state from the log still finds the producer's
// last sequence and epoch.
//
// The partition's ProducerStateTable keeps it in step on its event loop;
// the cleaner reads a copy from its own thread, so it locks (one
// uncontended lock per batch that carries a producer id).
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace runnel::storage {

struct LastRecord {
  std::optional<int64_t> last_data_offset;
  int16_t producer_epoch = -1;
  bool operator==(const LastRecord&) const = default;
};

class ActiveProducers {
 public:
  using Map = std::unordered_map<int64_t, LastRecord>;

  void set(int64_t producer_id, const LastRecord& last) {
    std::lock_guard lock(mu_);
    map_[producer_id] = last;
  }
  void erase(int64_t producer_id) {
    std::lock_guard lock(mu_);
    map_.erase(producer_id);
  }
  void clear() {
    std::lock_guard lock(mu_);
    map_.clear();
  }
  Map snapshot() const {
    std::lock_guard lock(mu_);
    return map_;
  }

 private:
  mutable std::mutex mu_;
  Map map_;
};

}  // namespace runnel::storage
