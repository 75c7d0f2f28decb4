#include "broker/request_memory.h"

#include <catch2/catch.hpp>

#include <optional>

namespace runnel::broker {
namespace {

// One frame's reader: its first chunk, then one more, as the connection
// reads them (plain coroutines: GCC 12 and lambdas in coroutines).
struct Frame {
  std::optional<RequestMemory::Permit> permit;
  bool started = false;
  bool grown = false;
  bool gave_up = false;
};

awaitable<void> start_frame(RequestMemory& pool, Frame& f, size_t bytes, const bool* abandoned) {
  auto p = co_await pool.acquire(bytes, abandoned);
  if (p.bytes() == 0) {
    f.gave_up = true;
    co_return;
  }
  f.permit.emplace(std::move(p));
  f.started = true;
}

awaitable<void> grow_frame(RequestMemory& pool, Frame& f, size_t more, const bool* abandoned) {
  const bool grown = co_await pool.grow(*f.permit, more, abandoned);
  (grown ? f.grown : f.gave_up) = true;
}

struct Pool {
  asio::io_context io;
  RequestMemory pool;
  explicit Pool(size_t limit) : pool(io.get_executor(), limit) {}
  void start(Frame& f, size_t bytes, const bool* abandoned = nullptr) {
    asio::co_spawn(io, start_frame(pool, f, bytes, abandoned), asio::detached);
    settle();
  }
  void grow(Frame& f, size_t more, const bool* abandoned = nullptr) {
    asio::co_spawn(io, grow_frame(pool, f, more, abandoned), asio::detached);
    settle();
  }
  void settle() {
    io.restart();
    io.poll();
  }
};

TEST_CASE("unbounded request memory counts and never waits", "[request_memory]") {
  Pool p(0);
  Frame a;
  p.start(a, 1 << 20);
  REQUIRE(a.started);
  p.grow(a, 100 << 20);
  CHECK(a.grown);
  CHECK(p.pool.in_use() == (1u << 20) + (100u << 20));
  a.permit.reset();
  CHECK(p.pool.in_use() == 0);
}

TEST_CASE("a frame's bytes count as its buffer grows; the oldest arriving frame always moves", "[request_memory]") {
  Pool p(100);
  Frame a, b;
  p.start(a, 60);
  p.start(b, 40);
  REQUIRE((a.started && b.started));
  CHECK(p.pool.in_use() == 100);
  // B is not the oldest: its next chunk waits for room.
  p.grow(b, 10);
  CHECK_FALSE(b.grown);
  // A is, and everything held is frames still arriving: it passes the bound
  // rather than wait on B, which waits on it.
  p.grow(a, 50);
  CHECK(a.grown);
  CHECK(p.pool.in_use() == 150);
  // A is read; while it is served B is the oldest arriving, but memory of a
  // frame read in full is held, which will come back: B waits for it.
  p.pool.arrived(*a.permit);
  p.settle();
  CHECK_FALSE(b.grown);
  a.permit.reset();
  p.settle();
  CHECK(b.grown);
  CHECK(p.pool.in_use() == 50);
}

TEST_CASE("a new frame waits while the pool is full, and goes first once nothing is held", "[request_memory]") {
  Pool p(100);
  Frame a, b, c;
  p.start(a, 100);
  p.pool.arrived(*a.permit);
  p.start(b, 10);
  CHECK_FALSE(b.started);
  a.permit.reset();
  p.settle();
  CHECK(b.started);
  b.permit.reset();
  // Larger than the whole bound: let through when nothing is held.
  p.start(c, 500);
  CHECK(c.started);
}

TEST_CASE("a first chunk does not wait behind large frames growing", "[request_memory]") {
  Pool p(100);
  Frame a, b, c, d;
  p.start(a, 30);  // the oldest arriving frame
  p.start(b, 30);
  // Past three quarters of the pool: B's next chunk waits.
  p.grow(b, 20);
  CHECK_FALSE(b.grown);
  // A small request's first chunk fits the quarter kept for first chunks.
  p.start(c, 10);
  REQUIRE(c.started);
  p.pool.arrived(*c.permit);  // read in full, being served
  p.start(d, 40);  // 110 would pass the bound: it waits
  CHECK_FALSE(d.started);
  a.permit.reset();
  p.settle();
  // 40 held: B's chunk fits three quarters again, and D's the whole pool.
  CHECK(b.grown);
  CHECK(d.started);
  CHECK(p.pool.in_use() == 100);
}

TEST_CASE("a frame still arriving grows to its share of the pool, and past it holds up no one", "[request_memory]") {
  Pool p(400);  // three quarters for frames growing: 300
  Frame a, b, c;
  p.start(a, 10);  // the oldest arriving frame, stalled
  p.start(b, 10);
  p.start(c, 10);
  // Three frames arriving: a share of 100 each.
  p.grow(b, 80);
  REQUIRE(b.grown);
  b.grown = false;
  p.grow(b, 80);  // 170 would pass B's share, though the pool has room for it
  CHECK_FALSE(b.grown);
  p.grow(c, 80);  // within C's share: it does not wait behind B
  CHECK(c.grown);
  // C is read in full: two frames arriving, B's share is 150, still short.
  p.pool.arrived(*c.permit);
  p.settle();
  CHECK_FALSE(b.grown);
  // A goes (its connection closed): B is the only frame arriving.
  a.permit.reset();
  p.settle();
  CHECK(b.grown);
  CHECK(p.pool.in_use() == 170 + 90);
}

TEST_CASE("a connection that goes away stops waiting for request memory", "[request_memory]") {
  Pool p(100);
  Frame a, b, c;
  p.start(a, 100);
  bool b_gone = false, c_gone = false;
  p.start(b, 10, &b_gone);
  p.start(c, 10, &c_gone);
  REQUIRE_FALSE((b.started || c.started));
  b_gone = true;
  p.pool.wake_waiters();
  p.settle();
  CHECK(b.gave_up);
  CHECK_FALSE(c.gave_up);
  CHECK_FALSE(c.started);
  // And the one behind it is next in line.
  a.permit.reset();
  p.settle();
  CHECK(c.started);
}

}  // namespace
}  // namespace runnel::broker
