// Bounds the bytes of request frames being served at once
// (queued.max.request.bytes). A connection that would exceed the bound waits
// before reading its frame, so memory stays bounded and the client is slowed
// by TCP instead. A frame larger than the whole bound still gets through when
// nothing else is in flight, so a legal request can never wait forever.
#pragma once

#include <deque>
#include <memory>

#include "broker/asio.h"

namespace runnel::broker {

class RequestMemory {
 public:
  // RAII: returns its bytes when destroyed.
  class Permit {
   public:
    Permit() = default;
    Permit(RequestMemory* pool, size_t bytes) : pool_(pool), bytes_(bytes) {}
    Permit(Permit&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)), bytes_(o.bytes_) {}
    Permit& operator=(Permit&& o) noexcept {
      release();
      pool_ = std::exchange(o.pool_, nullptr);
      bytes_ = o.bytes_;
      return *this;
    }
    ~Permit() { release(); }

   private:
    void release() {
      if (pool_) pool_->release(bytes_);
      pool_ = nullptr;
    }
    RequestMemory* pool_ = nullptr;
    size_t bytes_ = 0;
  };

  // limit 0: unbounded (Kafka's queued.max.request.bytes=-1).
  RequestMemory(asio::any_io_executor ex, size_t limit) : ex_(std::move(ex)), limit_(limit) {}

  awaitable<Permit> acquire(size_t bytes);
  size_t in_use() const { return in_use_; }

 private:
  void release(size_t bytes);
  bool fits(size_t bytes) const { return limit_ == 0 || in_use_ == 0 || in_use_ + bytes <= limit_; }

  asio::any_io_executor ex_;
  size_t limit_;
  size_t in_use_ = 0;
  std::deque<std::shared_ptr<asio::steady_timer>> waiters_;
};

}  // namespace runnel::broker
