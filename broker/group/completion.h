// Bridges the coordinator's callbacks to a handler coroutine: the handler
// awaits a Completion, the coordinator's callback fills it (now or when the
// rebalance completes) and wakes the handler by cancelling its timer.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "broker/asio.h"

namespace runnel::broker::group {

template <typename T>
struct Completion {
  explicit Completion(asio::any_io_executor ex) : timer(std::move(ex)) {}
  asio::steady_timer timer;
  std::optional<T> value;
};

// A plain function (not a coroutine), so the lambda never captures a
// coroutine parameter (GCC 12).
template <typename T>
std::function<void(T)> completer(const std::shared_ptr<Completion<T>>& c) {
  return [c](T v) {
    c->value = std::move(v);
    c->timer.cancel();
  };
}

template <typename T>
awaitable<T> wait_for(std::shared_ptr<Completion<T>> c) {
  while (!c->value) {
    c->timer.expires_at(asio::steady_timer::time_point::max());
    co_await c->timer.async_wait(as_tuple_awaitable);
  }
  co_return std::move(*c->value);
}

}  // namespace runnel::broker::group
