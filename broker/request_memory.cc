#include "broker/request_memory.h"

#include <algorithm>

namespace runnel::broker {

awaitable<RequestMemory::Permit> RequestMemory::acquire(size_t bytes) {
  if (waiters_.empty() && fits(bytes)) {
    in_use_ += bytes;
    co_return Permit(this, bytes);
  }
  // Wait in line, first come first served. The guard takes us out of the
  // line however we leave, including when the connection is torn down.
  auto timer = std::make_shared<asio::steady_timer>(ex_, asio::steady_timer::time_point::max());
  waiters_.push_back(timer);
  struct Leave {
    RequestMemory& pool;
    std::shared_ptr<asio::steady_timer> timer;
    ~Leave() {
      auto it = std::find(pool.waiters_.begin(), pool.waiters_.end(), timer);
      if (it == pool.waiters_.end()) return;
      bool was_first = it == pool.waiters_.begin();
      pool.waiters_.erase(it);
      if (was_first && !pool.waiters_.empty()) pool.waiters_.front()->cancel();
    }
  } leave{*this, timer};
  for (;;) {
    co_await timer->async_wait(as_tuple_awaitable);
    if (waiters_.front() == timer && fits(bytes)) break;
    timer->expires_at(asio::steady_timer::time_point::max());
  }
  in_use_ += bytes;
  co_return Permit(this, bytes);  // ~Leave wakes the next in line
}

void RequestMemory::release(size_t bytes) {
  in_use_ -= bytes;
  if (!waiters_.empty()) waiters_.front()->cancel();
}

}  // namespace runnel::broker
