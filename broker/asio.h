// The Asio names the broker uses, in one place.
#pragma once

#include <chrono>
#include <functional>

#include <boost/asio.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/channel.hpp>

namespace runnel::broker {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;
using boost::system::error_code;
inline constexpr auto use_awaitable = asio::use_awaitable;
inline constexpr auto as_tuple_awaitable = asio::as_tuple(asio::use_awaitable);

// Checks `done` every `interval` until it holds or `limit` has passed, and
// says whether it held: for state that changes without a signal to wait on
// (the metadata image and what acts on it, connections closing). Build
// `done` before the co_await: GCC 12 miscompiles a capturing lambda
// written inside a co_await expression.
inline awaitable<bool> poll_until(std::function<bool()> done, std::chrono::milliseconds interval,
                                  std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  asio::steady_timer timer(co_await asio::this_coro::executor);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) co_return false;
    timer.expires_after(interval);
    co_await timer.async_wait(as_tuple_awaitable);
  }
  co_return true;
}

}  // namespace runnel::broker
