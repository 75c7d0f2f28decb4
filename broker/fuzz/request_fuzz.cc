// libFuzzer target for whole requests: the input is what a client writes
// to one connection (request frames, each behind its 4-byte big-endian
// size, as on the wire) and every frame goes through the broker as a
// Connection would hand it over: header, route, decode, handler, storage.
// A fresh Broker per input, on a fresh log dir, so a finding reproduces
// from its input alone; the broker is stopped the way SIGTERM stops it,
// which answers waiting fetches and closes the logs cleanly.
//
// A finding is a sanitizer report, a crash, or a handler that throws (the
// Connection closes such a connection, logging "request failed": a broken
// invariant, never the answer to bad input). A malformed frame ends the
// input, as it ends the connection.
//
// Built by the `fuzz-broker` preset (clang, libFuzzer); the debug preset
// links the same entry point to replay_main.cc, which ctest runs over the
// committed corpus (broker/fuzz/corpus).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>

#include "broker/api_registry.h"
#include "broker/asio.h"
#include "broker/broker.h"
#include "broker/event_loop.h"
#include "broker/logging.h"
#include "broker/request_context.h"
#include "protocol/header.h"

namespace runnel::broker {
namespace {

namespace fs = std::filesystem;
namespace proto = runnel::protocol;

// How long one request may run before the next is served. Requests that
// wait longer (a Fetch's max_wait_ms, a JoinGroup's rebalance) stay
// pending, as they would on a connection's later responses, and are
// answered or dropped at the stop.
constexpr auto kRequestBudget = std::chrono::milliseconds(20);
// Bounds the stop: the requests still waiting are given this long.
constexpr auto kStopBudget = std::chrono::seconds(5);

// The log dirs: under /dev/shm when there is one (the fuzzer writes a
// segment, index and checkpoints per input), else the temp dir.
fs::path scratch_root() {
  std::error_code ec;
  if (fs::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0) return "/dev/shm";
  return fs::temp_directory_path();
}

struct Scratch {
  fs::path path;
  Scratch() {
    std::string tmpl = (scratch_root() / "runnel-request-fuzz-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    path = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// One request from the frame to its handler's end; owned by the handler's
// coroutine, so one left waiting keeps what it reads.
struct Request {
  std::shared_ptr<uint8_t[]> frame;
  size_t size = 0;
  proto::RequestHeader header;
  std::optional<RequestContext> ctx;
  proto::Bytes out;
  bool done = false;
  bool ok = true;
};

awaitable<void> run(std::shared_ptr<Request> r, const ApiRoute* route, proto::Reader reader) {
  proto::Writer writer(r->out);
  try {
    r->ok = co_await route->serve(*r->ctx, reader, writer);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "request_fuzz: %s v%d request threw: %s\n", route->name, r->header.api_version, e.what());
    std::abort();
  }
  r->done = true;
}

// Runs the loop until `finished` or `budget` has passed.
template <typename F>
void run_until(asio::io_context& io, F finished, std::chrono::milliseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (!finished() && std::chrono::steady_clock::now() < deadline) {
    if (io.stopped()) io.restart();
    io.run_one_for(std::chrono::milliseconds(1));
  }
}

class FuzzBroker {
 public:
  FuzzBroker() {
    std::map<std::string, std::string> props{
        {"node.id", "1"},
        {"listeners", "PLAINTEXT://127.0.0.1:0"},
        {"log.dirs", dir_.path.string()},
        // Group joins complete at once instead of after 3 s.
        {"group.initial.rebalance.delay.ms", "0"},
        // What a small tmpfs holds per input.
        {"log.segment.bytes", "1048576"},
        {"offsets.topic.num.partitions", "1"},
        {"transaction.state.log.num.partitions", "1"},
    };
    broker_.emplace(io_, BrokerConfig::from(props));
    broker_->start_background_work();
  }

  ~FuzzBroker() {
    bool stopped = false;
    broker_->begin_shutdown([&] { stopped = true; });
    run_until(io_, [&] { return stopped; }, kStopBudget);
    if (!stopped) {
      std::fprintf(stderr, "request_fuzz: the broker did not stop within %lld s\n",
                   static_cast<long long>(kStopBudget.count()));
      std::abort();
    }
    // As `runnel serve` exits: what still waits is destroyed while the
    // broker it refers to is alive.
    broker_->join_blocking_work();
    io_.drop_pending();
  }

  // Serves one frame; false when a connection would close on it.
  bool serve(const uint8_t* data, size_t size) {
    auto peek = proto::peek_header(proto::ByteView(data, size));
    if (!peek) return false;
    const ApiRoute* route = find_route(peek->api_key);
    if (!route || !route->supports(peek->api_version)) return false;

    auto r = std::make_shared<Request>();
    r->frame.reset(new uint8_t[size]);
    std::copy(data, data + size, r->frame.get());
    r->size = size;
    proto::Reader reader(proto::ByteView(r->frame.get(), size));
    r->header.decode(reader, proto::request_header_version(route->is_flexible(peek->api_version)));
    if (!reader.ok()) return false;
    r->ctx.emplace(RequestContext{.broker = *broker_,
                                  .header = r->header,
                                  .client_host = "127.0.0.1",
                                  .listener_name = "PLAINTEXT",
                                  .principal = {},
                                  .request_size = size,
                                  .release_order = [] {}});
    if (trace_) std::fprintf(stderr, "%s v%d\n", route->name, peek->api_version);
    r->out.resize(4);
    asio::co_spawn(io_, run(r, route, reader), asio::detached);
    run_until(io_, [&] { return r->done; }, kRequestBudget);
    if (!r->done) return true;  // waiting: the next request goes on
    if (trace_) std::fprintf(stderr, "  -> %s, %zu response bytes\n", r->ok ? "ok" : "malformed", r->out.size() - 4);
    if (!r->ok) return false;    // malformed body: the connection closes
    if (r->ctx->close_connection) return false;
    return true;
  }

 private:
  // REQUEST_FUZZ_TRACE=1 prints each request's API and outcome (replaying one input by hand).
  const bool trace_ = std::getenv("REQUEST_FUZZ_TRACE") != nullptr;
  Scratch dir_;
  EventLoop io_{1};
  std::optional<Broker> broker_;
};

}  // namespace
}  // namespace runnel::broker

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  // A fuzzer's inputs are malformed on purpose: the broker's warnings about
  // them would be most of the run's time.
  runnel::broker::set_log_level(runnel::broker::LogLevel::error);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  runnel::broker::FuzzBroker broker;
  size_t at = 0;
  while (size - at >= 4) {
    const uint32_t announced = (uint32_t{data[at]} << 24) | (uint32_t{data[at + 1]} << 16) |
                               (uint32_t{data[at + 2]} << 8) | uint32_t{data[at + 3]};
    at += 4;
    // A frame cut short by the input's end is what a client that went away
    // leaves: nothing is served.
    if (announced > size - at) break;
    if (!broker.serve(data + at, announced)) break;
    at += announced;
  }
  return 0;
}
