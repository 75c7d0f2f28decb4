// A real Broker and Server inside the test process: listening on
// 127.0.0.1 port 0 with a fresh log dir, its event loop on a thread of its
// own, stopped the way SIGTERM stops `runnel serve` (Server::stop, then
// Broker::begin_shutdown). Tests talk to it over a socket (kafka_client.h)
// and read its state on the loop with on_loop().
#pragma once

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>

#include "broker/broker.h"
#include "broker/event_loop.h"
#include "broker/server.h"
#include "storage/test_util.h"

namespace runnel::broker::testing {

// Longer than any graceful stop needs (connections drain within
// request.timeout.ms, which the fixture sets to this too).
inline constexpr std::chrono::seconds kLoopTimeout{30};

class BrokerFixture {
 public:
  // `overrides` are server.properties keys, as `runnel serve --override` takes them.
  explicit BrokerFixture(const std::map<std::string, std::string>& overrides = {}) {
    // As in main(): a client that goes away during a sendfile must not kill the process.
    std::signal(SIGPIPE, SIG_IGN);
    std::map<std::string, std::string> props{
        {"node.id", "1"},
        {"listeners", "PLAINTEXT://127.0.0.1:0"},
        {"log.dirs", dir_.path.string()},
        {"request.timeout.ms", std::to_string(std::chrono::milliseconds(kLoopTimeout).count())},
    };
    for (const auto& [k, v] : overrides) props[k] = v;
    broker_ = std::make_unique<Broker>(io_, BrokerConfig::from(props));
    server_ = std::make_unique<Server>(io_, *broker_);
    server_->bind();
    port_ = static_cast<uint16_t>(broker_->advertised_listener("PLAINTEXT").port);
    broker_->start_background_work();
    server_->start();
    loop_ = std::thread([this] {
      io_.run();
      stopped_.set_value();
    });
  }

  ~BrokerFixture() {
    stop();
    // As `runnel serve` exits (event_loop.h).
    broker_->join_blocking_work();
    io_.drop_pending();
  }
  BrokerFixture(const BrokerFixture&) = delete;
  BrokerFixture& operator=(const BrokerFixture&) = delete;

  uint16_t port() const { return port_; }
  const std::filesystem::path& log_dir() const { return dir_.path; }

  // Graceful stop, as on SIGTERM; returns once the loop has ended. A loop
  // that has not ended within kLoopTimeout is stopped hard; one stuck in a
  // handler cannot be, and the process aborts rather than hang the run.
  void stop() {
    if (!loop_.joinable()) return;
    asio::post(io_, [this] { server_->stop(); });
    auto stopped = stopped_.get_future();
    if (stopped.wait_for(kLoopTimeout) != std::future_status::ready) {
      std::fprintf(stderr, "BrokerFixture: the broker did not stop gracefully; stopping its event loop\n");
      io_.stop();
      if (stopped.wait_for(kLoopTimeout) != std::future_status::ready) {
        std::fprintf(stderr, "BrokerFixture: the broker's event loop is stuck; aborting\n");
        std::abort();
      }
    }
    loop_.join();
  }

  // Runs `fn(broker)` on the event loop, where the broker's state lives, and
  // returns its result. Throws if the loop does not get to it in time.
  template <typename F>
  auto on_loop(F fn) -> std::invoke_result_t<F, Broker&> {
    using R = std::invoke_result_t<F, Broker&>;
    // Shared, so a task the loop reaches after the timeout still has its state.
    auto task = std::make_shared<std::packaged_task<R()>>([this, fn = std::move(fn)]() mutable { return fn(*broker_); });
    auto result = task->get_future();
    asio::post(io_, [task] { (*task)(); });
    if (result.wait_for(kLoopTimeout) != std::future_status::ready)
      throw std::runtime_error("the broker's event loop did not run a posted task");
    return result.get();
  }

 private:
  storage::testing::TempDir dir_;
  EventLoop io_{1};
  std::unique_ptr<Broker> broker_;
  std::unique_ptr<Server> server_;
  uint16_t port_ = 0;
  std::promise<void> stopped_;
  std::thread loop_;
};

}  // namespace runnel::broker::testing
