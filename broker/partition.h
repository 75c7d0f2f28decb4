// A partition this broker leads: its log, its leader epoch and replica set,
// and the "new data" signal that wakes long-polling fetches.
//
// With one broker every partition has one replica (this node), the ISR is
// that replica, and the high watermark is the log end offset. The fields a
// cluster needs are here already so the handlers report them truthfully.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "broker/asio.h"
#include "broker/producer_state.h"
#include "storage/log.h"

namespace runnel::broker {

// Wakes every coroutine waiting on it. A waiter passes its own timer, set
// to its deadline; notify() cancels the timers, which ends their waits.
class DataSignal {
 public:
  void add_waiter(const std::shared_ptr<asio::steady_timer>& timer) { waiters_.push_back(timer); }
  void notify() {
    for (auto& w : waiters_)
      if (auto t = w.lock()) t->cancel();
    waiters_.clear();
  }

 private:
  std::vector<std::weak_ptr<asio::steady_timer>> waiters_;
};

class Partition {
 public:
  Partition(std::string topic, int32_t index, std::shared_ptr<storage::Log> log, int32_t node_id)
      : topic_(std::move(topic)), index_(index), log_(std::move(log)), replicas_{node_id} {}

  const std::string& topic() const { return topic_; }
  int32_t index() const { return index_; }
  storage::Log& log() { return *log_; }
  const std::shared_ptr<storage::Log>& log_ptr() const { return log_; }

  int32_t leader_id() const { return replicas_.front(); }
  int32_t leader_epoch() const { return leader_epoch_; }
  const std::vector<int32_t>& replicas() const { return replicas_; }
  const std::vector<int32_t>& isr() const { return replicas_; }

  DataSignal& data_signal() { return signal_; }
  ProducerStateTable& producers() { return producers_; }
  // Drops producers idle longer than producer.id.expiration.ms; runs at
  // most once a minute, on the produce path.
  void maybe_expire_producers(int64_t now_ms, int64_t expiration_ms) {
    if (now_ms - last_expiry_ms_ < 60'000) return;
    last_expiry_ms_ = now_ms;
    producers_.expire(now_ms, expiration_ms);
  }

  // Rebuilds the idempotent producers' state from the batches in the log.
  std::error_code load_producer_state();

 private:
  std::string topic_;
  int32_t index_;
  std::shared_ptr<storage::Log> log_;
  std::vector<int32_t> replicas_;
  int32_t leader_epoch_ = 0;
  DataSignal signal_;
  ProducerStateTable producers_;
  int64_t last_expiry_ms_ = 0;
};

}  // namespace runnel::broker
