// Bounds the bytes of request frames read and not yet done with
// (queued.max.request.bytes). A frame's bytes are counted as its buffer
// grows (the connection reads the first MiB, then doubles the buffer as
// bytes arrive), not all at its size prefix as Kafka counts them: a client
// that announces a large frame and stalls holds only what it sent, and
// the frame read deadline (runnel.request.read.timeout.ms) ends even that.
// A connection whose next chunk would pass the bound waits, first come
// first served, and the client is slowed by TCP.
//
// A quarter of the pool is for first chunks: the chunks after them (large
// frames growing) wait once three quarters are held, and first chunks wait
// in a line of their own, so a client sending small requests is not held
// up behind others' large frames (a flood of frames of
// socket.request.max.bytes).
//
// And a frame still arriving grows to at most an equal share of those three
// quarters (over the frames arriving now, one a connection), so one fast
// sender of a large frame does not take the room of every other large
// frame in flight; past its share it waits in line as when the pool is full.
//
// Two rules keep every frame moving. A frame's first chunk is let through
// when nothing at all is held, so a frame larger than the whole bound can
// be read. And the oldest frame still arriving gets its next chunk past the
// bound whenever the memory held is all frames still arriving, which would
// otherwise wait on each other for ever; so the pool passes the bound by at
// most the rest of that one frame.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>

#include "broker/asio.h"

namespace runnel::broker {

class RequestMemory {
 public:
  // RAII: a frame's bytes, given back when destroyed.
  class Permit {
   public:
    Permit() = default;
    Permit(Permit&& o) noexcept { *this = std::move(o); }
    Permit& operator=(Permit&& o) noexcept {
      release();
      pool_ = std::exchange(o.pool_, nullptr);
      id_ = o.id_;
      bytes_ = o.bytes_;
      arriving_ = o.arriving_;
      return *this;
    }
    ~Permit() { release(); }
    size_t bytes() const { return bytes_; }

   private:
    friend class RequestMemory;
    Permit(RequestMemory* pool, uint64_t id, size_t bytes) : pool_(pool), id_(id), bytes_(bytes), arriving_(true) {}
    void release() {
      if (pool_) pool_->release(*this);
      pool_ = nullptr;
    }
    RequestMemory* pool_ = nullptr;
    uint64_t id_ = 0;
    size_t bytes_ = 0;
    bool arriving_ = false;  // the frame is still being read
  };

  // limit 0: unbounded (Kafka's queued.max.request.bytes=-1).
  RequestMemory(asio::any_io_executor ex, size_t limit) : ex_(std::move(ex)), limit_(limit) {}

  // A frame's first chunk; the frame is arriving until arrived(). Waits
  // while the pool is full; gives up (an empty permit) once *abandoned,
  // checked whenever the pool wakes its waiters (wake_waiters()).
  awaitable<Permit> acquire(size_t bytes, const bool* abandoned = nullptr);
  // The frame's next chunk; false when *abandoned first.
  awaitable<bool> grow(Permit& permit, size_t more, const bool* abandoned = nullptr);
  // The frame is read in full: its bytes stay counted until the permit goes.
  void arrived(Permit& permit);
  // Wakes every waiter to look at its abandoned flag (a connection closing).
  void wake_waiters();

  size_t in_use() const { return in_use_; }

 private:
  struct Waiter {
    explicit Waiter(asio::any_io_executor ex, uint64_t id, size_t bytes, size_t held)
        : timer(std::move(ex), asio::steady_timer::time_point::max()), id(id), bytes(bytes), held(held) {}
    asio::steady_timer timer;
    uint64_t id;  // 0: a first chunk
    size_t bytes;
    size_t held;  // what the frame holds already (growth)
  };

  void release(Permit& permit);
  bool fits(size_t bytes) const { return limit_ == 0 || in_use_ + bytes <= limit_; }
  bool fits_growth(size_t bytes) const { return limit_ == 0 || in_use_ + bytes <= limit_ - limit_ / 4; }
  // Whether a frame still arriving may hold `held` bytes: its share of the growth room.
  bool within_share(size_t held) const {
    return limit_ == 0 || arriving_.size() <= 1 || held <= (limit_ - limit_ / 4) / arriving_.size();
  }
  // Whether a waiter of w's kind (first chunk or growth) that holds the line is ahead of it.
  bool behind_its_kind(const Waiter& w) const;
  bool holds_the_line(const Waiter& w) const;
  bool waiting(bool growth) const;  // whether any waiter of that kind is in line
  bool may_proceed(const Waiter& w, bool behind) const;
  // Wakes the waiters that may proceed now that the pool changed.
  void wake_next();
  awaitable<bool> wait(uint64_t id, size_t bytes, size_t held, const bool* abandoned);

  asio::any_io_executor ex_;
  size_t limit_;
  size_t in_use_ = 0;
  size_t arrived_bytes_ = 0;      // held by frames read in full
  std::deque<uint64_t> arriving_;  // frames being read, oldest first
  uint64_t next_id_ = 1;
  std::deque<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace runnel::broker
