#include "broker/request_memory.h"

#include <algorithm>

namespace runnel::broker {

bool RequestMemory::holds_the_line(const Waiter& w) const {
  // A frame held back by its share is not waiting for room: others pass it.
  return w.id == 0 || within_share(w.held + w.bytes);
}

bool RequestMemory::behind_its_kind(const Waiter& w) const {
  for (const auto& other : waiters_) {
    if (other.get() == &w) return false;
    if ((other->id == 0) == (w.id == 0) && holds_the_line(*other)) return true;
  }
  return false;
}

bool RequestMemory::may_proceed(const Waiter& w, bool behind) const {
  // The oldest frame still arriving, when nothing but arriving frames holds
  // memory: without it they could all wait on each other.
  if (w.id != 0 && !arriving_.empty() && arriving_.front() == w.id && arrived_bytes_ == 0) return true;
  if (behind) return false;
  if (w.id != 0) return fits_growth(w.bytes) && within_share(w.held + w.bytes);
  return fits(w.bytes) || in_use_ == 0;
}

awaitable<bool> RequestMemory::wait(uint64_t id, size_t bytes, size_t held, const bool* abandoned) {
  auto w = std::make_shared<Waiter>(ex_, id, bytes, held);
  waiters_.push_back(w);
  // Takes us out of the line however we leave, including when the
  // connection is torn down; whoever is next then looks again.
  struct Leave {
    RequestMemory& pool;
    std::shared_ptr<Waiter> w;
    ~Leave() {
      auto it = std::find(pool.waiters_.begin(), pool.waiters_.end(), w);
      if (it == pool.waiters_.end()) return;
      pool.waiters_.erase(it);
      pool.wake_next();
    }
  } leave{*this, w};
  for (;;) {
    if (abandoned && *abandoned) co_return false;
    if (may_proceed(*w, behind_its_kind(*w))) co_return true;
    w->timer.expires_at(asio::steady_timer::time_point::max());
    co_await w->timer.async_wait(as_tuple_awaitable);
  }
}

bool RequestMemory::waiting(bool growth) const {
  return std::any_of(waiters_.begin(), waiters_.end(), [growth](const auto& w) { return (w->id != 0) == growth; });
}

awaitable<RequestMemory::Permit> RequestMemory::acquire(size_t bytes, const bool* abandoned) {
  if (limit_ != 0 && !(!waiting(false) && (fits(bytes) || in_use_ == 0)))
    if (!co_await wait(0, bytes, 0, abandoned)) co_return Permit{};
  const uint64_t id = next_id_++;
  in_use_ += bytes;
  if (limit_ != 0) arriving_.push_back(id);
  co_return Permit(this, id, bytes);
}

awaitable<bool> RequestMemory::grow(Permit& permit, size_t more, const bool* abandoned) {
  if (limit_ != 0) {
    const bool oldest = !arriving_.empty() && arriving_.front() == permit.id_ && arrived_bytes_ == 0;
    if (!oldest && !(!waiting(true) && fits_growth(more) && within_share(permit.bytes_ + more)))
      if (!co_await wait(permit.id_, more, permit.bytes_, abandoned)) co_return false;
  }
  in_use_ += more;
  permit.bytes_ += more;
  co_return true;
}

void RequestMemory::arrived(Permit& permit) {
  if (!permit.pool_ || !permit.arriving_) return;
  permit.arriving_ = false;
  if (limit_ == 0) return;
  std::erase(arriving_, permit.id_);
  arrived_bytes_ += permit.bytes_;
  wake_next();  // another frame may be the oldest arriving now
}

void RequestMemory::release(Permit& permit) {
  in_use_ -= permit.bytes_;
  if (limit_ == 0) return;
  if (permit.arriving_)
    std::erase(arriving_, permit.id_);
  else
    arrived_bytes_ -= permit.bytes_;
  wake_next();
}

void RequestMemory::wake_waiters() {
  for (auto& w : waiters_) w->timer.cancel();
}

void RequestMemory::wake_next() {
  // One pass in line order waking those that may proceed, rather than
  // every waiter to look and most to wait again.
  bool first_chunk_ahead = false, growth_ahead = false;
  for (auto& w : waiters_) {
    bool& ahead = w->id == 0 ? first_chunk_ahead : growth_ahead;
    if (may_proceed(*w, ahead)) w->timer.cancel();
    if (holds_the_line(*w)) ahead = true;
  }
}

}  // namespace runnel::broker
