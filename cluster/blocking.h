// Runs a blocking function on another executor (the broker's blocking
// pool) and resumes the awaiting coroutine on its own executor with the
// result. Not a coroutine itself, so `fn` never lives in a coroutine frame.
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <type_traits>

namespace runnel::cluster {

template <typename F>
auto run_blocking(boost::asio::any_io_executor pool, F fn) {
  namespace asio = boost::asio;
  using R = std::invoke_result_t<F>;
  return asio::async_initiate<decltype(asio::use_awaitable), void(R)>(
      [pool](auto handler, F fn) {
        asio::post(pool, [fn = std::move(fn), handler = std::move(handler)]() mutable {
          R result = fn();
          auto ex = asio::get_associated_executor(handler);
          asio::dispatch(ex, [handler = std::move(handler), result = std::move(result)]() mutable {
            std::move(handler)(std::move(result));
          });
        });
      },
      asio::use_awaitable, std::move(fn));
}

}  // namespace runnel::cluster
