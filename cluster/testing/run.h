// Test helpers: run an awaitable on an io_context until it completes,
// bounded (a hung store fails the test instead of hanging it).
#pragma once

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>

namespace runnel::cluster::testing {

// Runs the loop until `pred` holds or `limit` passes; whether it held.
template <typename P>
bool run_until(boost::asio::io_context& io, P pred, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!pred()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    io.restart();
    io.run_for(std::chrono::milliseconds(5));
  }
  return true;
}

// Starts `a`; its result lands in `out` (engaged when done).
template <typename T>
void spawn(boost::asio::io_context& io, boost::asio::awaitable<T> a, std::optional<T>& out) {
  auto body = [](boost::asio::awaitable<T> a, std::optional<T>* out) -> boost::asio::awaitable<void> {
    out->emplace(co_await std::move(a));
  };
  boost::asio::co_spawn(io, body(std::move(a), &out), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);
  });
}

template <typename T>
T run(boost::asio::io_context& io, boost::asio::awaitable<T> a, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  std::optional<T> out;
  spawn(io, std::move(a), out);
  if (!run_until(io, [&] { return out.has_value(); }, limit)) throw std::runtime_error("timed out");
  return std::move(*out);
}

}  // namespace runnel::cluster::testing
