// A partition this broker leads: its log, its leader epoch and replica set,
// and the fetches waiting for it to change.
//
// With one broker every partition has one replica (this node), the ISR is
// that replica, and the high watermark is the log end offset. The fields a
// cluster needs are here already so the handlers report them truthfully.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "broker/delayed_operations.h"
#include "broker/producer_state.h"
#include "storage/log.h"

namespace runnel::broker {

class Partition {
 public:
  Partition(std::string topic, int32_t index, std::shared_ptr<storage::Log> log, int32_t node_id)
      : topic_(std::move(topic)), index_(index), log_(std::move(log)), replicas_{node_id} {}
  ~Partition();
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  const std::string& topic() const { return topic_; }
  int32_t index() const { return index_; }
  storage::Log& log() { return *log_; }
  const std::shared_ptr<storage::Log>& log_ptr() const { return log_; }

  int32_t leader_id() const { return replicas_.front(); }
  int32_t leader_epoch() const { return leader_epoch_; }
  const std::vector<int32_t>& replicas() const { return replicas_; }
  const std::vector<int32_t>& isr() const { return replicas_; }

  // The long-poll fetches waiting on this partition (Kafka's delayed fetch
  // key). Whatever changes what a fetch would read (an append, a deletion)
  // calls check_and_complete() on it.
  WatchList& fetch_watchers() { return fetch_watchers_; }
  ProducerStateTable& producers() { return producers_; }
  // Drops producers idle for producer.id.expiration.ms; the broker calls it
  // every producer.id.expiration.check.interval.ms, as Kafka does.
  void expire_producers(int64_t now_ms) { producers_.expire(now_ms, producer_expiration_ms_); }

  // Loads the idempotent producers' state the way Kafka's LogLoader does:
  // the latest valid snapshot (corrupt ones are deleted), then the log
  // after it; without a snapshot, the whole log. Producers idle for
  // `expiration_ms` (producer.id.expiration.ms) are left out. From then on
  // the log writes this state into its snapshots (storage/log.h).
  std::error_code load_producer_state(int64_t now_ms, int64_t expiration_ms);

 private:
  std::string topic_;
  int32_t index_;
  std::shared_ptr<storage::Log> log_;
  std::vector<int32_t> replicas_;
  int32_t leader_epoch_ = 0;
  WatchList fetch_watchers_;
  // Replays the batches in [from, to) into producers_.
  std::error_code replay_producers(int64_t from, int64_t to);

  ProducerStateTable producers_;
  int64_t producer_expiration_ms_ = 86'400'000;
};

}  // namespace runnel::broker
