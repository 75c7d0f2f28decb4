#include "broker/connection.h"

#include <cassert>
#include <cstring>

#include "broker/api_registry.h"
#include "broker/broker.h"
#include "broker/client_address.h"
#include "broker/logging.h"
#include "broker/quota_managers.h"
#include "broker/sasl_server_authenticator.h"
#include "broker/timed_executor.h"
#include "protocol/error_codes.h"
#include "protocol/messages/00_produce.h"
#include "protocol/messages/17_sasl_handshake.h"
#include "protocol/messages/18_api_versions.h"
#include "security/channel_builder.h"

namespace runnel::broker {

using namespace asio::experimental::awaitable_operators;
namespace proto = runnel::protocol;

namespace {

// Responses queued behind the one being written; past this the request loop
// waits, which stops reading from the socket (back-pressure on the client).
constexpr size_t kResponseQueueDepth = 64;

// Kafka's network processor polls its selector for up to 300 ms.
constexpr auto kIdlePoll = std::chrono::milliseconds(300);
// An idle period this long (about 31 years) is never reached; a longer one
// would overflow the steady clock's nanoseconds, so it means never too.
constexpr int64_t kNeverIdleMs = 1'000'000'000'000;

// A frame up to this size gets its whole buffer at once (nearly every
// request, so the produce path copies nothing); a larger one grows by
// doubling as its bytes arrive, so a size prefix alone reserves no more
// than this, and a frame that stalls holds at most twice what it sent.
constexpr size_t kFirstFrameChunk = 1 << 20;

void put_size_prefix(proto::Bytes& bytes, size_t body_size) {
  assert(body_size <= INT32_MAX);  // callers refuse larger frames
  uint32_t n = static_cast<uint32_t>(body_size);
  bytes[0] = static_cast<uint8_t>(n >> 24);
  bytes[1] = static_cast<uint8_t>(n >> 16);
  bytes[2] = static_cast<uint8_t>(n >> 8);
  bytes[3] = static_cast<uint8_t>(n);
}

}  // namespace

// One request being served, owned by its handler's coroutine and, once the
// handler released the order, by its place in the response queue.
struct ServedRequest {
  ServedRequest(asio::any_io_executor ex, std::shared_ptr<uint8_t[]> f, size_t size, RequestMemory::Permit p)
      : frame(std::move(f)), reader(frame.get(), size, frame), permit(std::move(p)), signal(std::move(ex)) {
    signal.expires_at(asio::steady_timer::time_point::max());
  }
  // Wakes whoever waits for a change (released or done).
  void changed() { signal.cancel(); }
  awaitable<void> wait_released_or_done() {
    while (!released && !done) co_await signal.async_wait(as_tuple_awaitable);
  }
  awaitable<void> wait_done() {
    while (!done) co_await signal.async_wait(as_tuple_awaitable);
  }

  std::shared_ptr<uint8_t[]> frame;
  std::chrono::steady_clock::time_point received = std::chrono::steady_clock::now();
  proto::Reader reader;
  RequestMemory::Permit permit;  // the frame's bytes stay counted until the handler is done
  proto::RequestHeader header;
  const ApiRoute* route = nullptr;
  std::optional<RequestContext> ctx;
  OutboundResponse out;
  bool released = false;
  bool done = false;
  bool ok = false;      // the request decoded and the handler returned
  std::string failure;  // what the handler threw
  // The time the handler held the event loop, measured while a
  // request_percentage quota exists (broker/timed_executor.h).
  std::shared_ptr<std::chrono::steady_clock::duration> thread_time;
  asio::steady_timer signal;  // never expires: cancel() is the wake-up
};

Connection::Connection(tcp::socket socket, Broker& broker, std::string listener_name,
                       std::shared_ptr<const security::ChannelBuilder> channel_builder)
    : channel_builder_(std::move(channel_builder)),
      transport_(channel_builder_->build(std::move(socket))),
      broker_(broker),
      listener_name_(std::move(listener_name)),
      responses_(transport_->socket().get_executor(), kResponseQueueDepth),
      last_activity_(std::chrono::steady_clock::now()),
      read_deadline_(transport_->socket().get_executor()),
      throttle_timer_(transport_->socket().get_executor()) {
  error_code ec;
  auto ep = transport_->socket().remote_endpoint(ec);
  peer_ = ec ? "unknown" : ep.address().to_string() + ":" + std::to_string(ep.port());
  client_host_ = ec ? "unknown" : java_host_address(ep.address());
  transport_->socket().set_option(tcp::no_delay(true), ec);
}

Connection::~Connection() = default;

void Connection::start() {
  auto self = shared_from_this();
  broker_.connection_opened(self);
  asio::co_spawn(transport_->socket().get_executor(),
                 [self]() -> awaitable<void> {
                   co_await ((self->request_loop() && self->response_loop()) || self->idle_watchdog());
                 },
                 [self](std::exception_ptr e) {
                   if (e) {
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception& ex) {
                       RLOG_WARN("connection %s: %s", self->peer_.c_str(), ex.what());
                     }
                   }
                   self->close();
                   self->broker_.connection_closed(self.get());
                 });
}

void Connection::close() {
  if (closed_) return;
  closed_ = true;
  abandon_reading();
  transport_->close();
  throttle_timer_.cancel();
  slot_.reset();
  responses_.close();
}

void Connection::abandon_reading() {
  if (reading_abandoned_) return;
  reading_abandoned_ = true;
  broker_.request_memory().wake_waiters();  // a wait for the pool ends now
}

void Connection::stop_reading() {
  stop_reading_ = true;
  abandon_reading();
  transport_->shutdown_receive();  // a pending read ends now
}

awaitable<bool> Connection::authenticate() {
  if (auto why = co_await transport_->handshake(); !why.empty()) {
    // Kafka logs a failed handshake as a failed authentication, at INFO:
    // a client's mistake (unknown CA, expired certificate, plaintext on a
    // TLS port), not the broker's.
    RLOG_INFO("failed authentication with %s on listener %s (%s handshake failed: %s)", peer_.c_str(),
              listener_name_.c_str(), channel_builder_->security_protocol().c_str(), why.c_str());
    co_return false;
  }
  auto principal = channel_builder_->principal(*transport_);
  if (!principal) {
    RLOG_INFO("failed authentication with %s on listener %s: no ssl.principal.mapping.rules rule applies to %s",
              peer_.c_str(), listener_name_.c_str(), transport_->peer_subject().value_or("").c_str());
    co_return false;
  }
  principal_ = std::move(*principal);
  if (const auto* sasl = channel_builder_->sasl()) sasl_ = std::make_unique<SaslServerAuthenticator>(*sasl);
  // Only certificate-bearing clients (mTLS) get a line: which certificate
  // became which principal is what an operator debugging ACLs needs.
  if (auto dn = transport_->peer_subject())
    RLOG_INFO("connection from %s on listener %s: client certificate %s is principal %s", peer_.c_str(),
              listener_name_.c_str(), dn->c_str(), principal_.to_string().c_str());
  last_activity_ = std::chrono::steady_clock::now();
  co_return true;
}

awaitable<void> Connection::request_loop() {
  const int32_t max_request = broker_.config().get_int("socket.request.max.bytes");
  const bool authenticated = co_await authenticate();
  while (authenticated) {
    co_await wait_out_throttle();
    if (closed_) break;
    uint8_t size_buf[4];
    if (co_await transport_->read(asio::buffer(size_buf))) break;
    last_activity_ = std::chrono::steady_clock::now();
    int32_t size = static_cast<int32_t>((uint32_t{size_buf[0]} << 24) | (uint32_t{size_buf[1]} << 16) |
                                        (uint32_t{size_buf[2]} << 8) | size_buf[3]);
    // Until SASL completes, Kafka reads at most sasl.server.max.receive.size
    // ("Failing SASL authentication due to invalid receive size").
    const bool authenticating = sasl_ && sasl_->in_progress();
    const int32_t max_size = authenticating ? channel_builder_->sasl()->max_receive_size : max_request;
    if (size < 0 || size > max_size) {
      if (authenticating) {
        RLOG_INFO("failed authentication with %s on listener %s: invalid receive size %d (sasl.server.max.receive.size=%d)",
                  peer_.c_str(), listener_name_.c_str(), size, max_size);
        break;
      }
      // Kafka's InvalidReceiveException: the frame is refused unread.
      RLOG_WARN("closing connection from %s: request size %d is outside [0, socket.request.max.bytes=%d]",
                peer_.c_str(), size, max_request);
      break;
    }
    // queued.max.request.bytes counts the frame as its buffer grows (request_memory.h).
    auto permit = co_await broker_.request_memory().acquire(std::min(static_cast<size_t>(size), kFirstFrameChunk),
                                                            &reading_abandoned_);
    if (reading_abandoned_) break;
    auto frame = co_await read_frame(static_cast<size_t>(size), permit);
    if (!frame) break;
    last_activity_ = std::chrono::steady_clock::now();
    ++unanswered_;
    // A malformed request ends the connection, but only after the responses
    // already queued have been sent: Kafka serves one request at a time, so
    // everything before the bad one would have been answered.
    if (!co_await serve(std::move(frame), static_cast<size_t>(size), std::move(permit))) break;
    if (stop_reading_) break;
  }
  // No more requests: the response loop sends what is queued, then the end
  // marker tells it to finish.
  OutboundResponse end;
  end.end_of_stream = true;
  co_await responses_.async_send(error_code{}, std::move(end), as_tuple_awaitable);
}

// A plain function: GCC 12 mishandles lambdas built inside a coroutine.
void Connection::arm_read_deadline() {
  const int64_t timeout_ms = broker_.config().get_long("runnel.request.read.timeout.ms");
  if (timeout_ms <= 0) return;
  read_deadline_.expires_after(std::chrono::milliseconds(timeout_ms));
  read_deadline_.async_wait([weak = weak_from_this(), timeout_ms](error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->closed_) return;
    RLOG_INFO("closing connection from %s: a request frame did not arrive within runnel.request.read.timeout.ms=%lld",
              self->peer_.c_str(), static_cast<long long>(timeout_ms));
    self->close();
  });
}

awaitable<std::shared_ptr<uint8_t[]>> Connection::read_frame(size_t size, RequestMemory::Permit& permit) {
  // The whole frame must arrive within runnel.request.read.timeout.ms of
  // its size prefix: a client that announces a frame and then trickles or
  // stops is cut then, not after connections.max.idle.ms.
  arm_read_deadline();
  // Not zero-filled: every byte is overwritten by the read (zeroing it
  // first showed up as 4% of a produce profile).
  size_t capacity = std::min(size, kFirstFrameChunk);
  auto frame = std::make_shared_for_overwrite<uint8_t[]>(capacity);
  size_t have = 0;
  bool failed = false;
  for (;;) {
    if (co_await transport_->read(asio::buffer(frame.get() + have, capacity - have))) {
      failed = true;
      break;
    }
    have = capacity;
    if (have == size) break;
    last_activity_ = std::chrono::steady_clock::now();
    const size_t next = std::min(size, capacity * 2);
    if (!co_await broker_.request_memory().grow(permit, next - capacity, &reading_abandoned_)) {
      failed = true;
      break;
    }
    capacity = next;
    auto bigger = std::make_shared_for_overwrite<uint8_t[]>(capacity);
    std::memcpy(bigger.get(), frame.get(), have);
    frame = std::move(bigger);
  }
  read_deadline_.cancel();
  if (failed || closed_) co_return nullptr;
  broker_.request_memory().arrived(permit);
  co_return frame;
}

awaitable<bool> Connection::serve(std::shared_ptr<uint8_t[]> frame, size_t size, RequestMemory::Permit permit) {
  auto peek = proto::peek_header(proto::ByteView(frame.get(), size));
  // Only a Produce starts before the released requests have finished (connection.h).
  if (!released_.empty() && (!peek || peek->api_key != proto::ProduceApi::key)) {
    co_await drain_released();
    // A released Produce may have been throttled after this was read.
    co_await wait_out_throttle();
    if (closed_) co_return false;
  }
  if (sasl_) {
    if (sasl_->in_progress()) co_return co_await serve_sasl(std::move(frame), size, std::move(permit));
    const auto now = std::chrono::steady_clock::now();
    // KIP-368: a SaslHandshake on an authenticated connection begins
    // re-authentication, when the session has a lifetime.
    if (peek && peek->api_key == proto::SaslHandshakeApi::key && sasl_->maybe_begin_reauthentication(now))
      co_return co_await serve_sasl(std::move(frame), size, std::move(permit));
    if (sasl_->session_expired(now)) {
      RLOG_INFO("closing connection from %s on listener %s: SASL session of %s expired (connections.max.reauth.ms)",
                peer_.c_str(), listener_name_.c_str(), principal_.to_string().c_str());
      co_return false;
    }
  }
  co_return co_await serve_api(std::move(frame), size, std::move(permit));
}

awaitable<bool> Connection::serve_sasl(std::shared_ptr<uint8_t[]> frame, size_t size, RequestMemory::Permit permit) {
  auto outcome = sasl_->on_frame(proto::ByteView(frame.get(), size));
  if (outcome.serve_api_versions) co_return co_await serve_api(std::move(frame), size, std::move(permit));
  if (outcome.response) {
    OutboundResponse out;
    out.bytes.resize(4);
    out.bytes.insert(out.bytes.end(), outcome.response->begin(), outcome.response->end());
    put_size_prefix(out.bytes, out.bytes.size() - 4);
    if (!co_await queue(std::move(out))) co_return false;
  } else {
    --unanswered_;
  }
  if (outcome.close) {
    // Kafka logs a failed authentication at INFO: the client's mistake.
    RLOG_INFO("failed %s with %s on listener %s (SASL %s): %s",
              sasl_->reauthenticating() ? "re-authentication" : "authentication", peer_.c_str(),
              listener_name_.c_str(), sasl_->mechanism().empty() ? "-" : sasl_->mechanism().c_str(),
              outcome.failure.c_str());
    co_return false;
  }
  if (!sasl_->in_progress()) {
    principal_ = sasl_->principal();
    RLOG_DEBUG("connection from %s on listener %s authenticated as %s (SASL %s)", peer_.c_str(),
               listener_name_.c_str(), principal_.to_string().c_str(), sasl_->mechanism().c_str());
  }
  co_return true;
}

awaitable<bool> Connection::serve_api(std::shared_ptr<uint8_t[]> frame, size_t size, RequestMemory::Permit permit) {
  auto peek = proto::peek_header(proto::ByteView(frame.get(), size));
  if (!peek) {
    RLOG_WARN("closing connection from %s: request header truncated", peer_.c_str());
    co_return false;
  }
  const ApiRoute* route = find_route(peek->api_key);
  auto executor = transport_->socket().get_executor();
  auto served = std::make_shared<ServedRequest>(executor, std::move(frame), size, std::move(permit));
  proto::RequestHeader& header = served->header;

  if (peek->api_key == proto::kApiVersionsKey && route && !route->supports(peek->api_version)) {
    // KIP-511: any ApiVersions version gets an answer; one we do not know
    // is answered at v0 with our range so the client can retry.
    header.decode(served->reader, peek->api_version >= route->flexible_from ? 2 : 1);
    if (!served->reader.ok()) co_return false;
    co_return co_await answer_unsupported_api_versions(header);
  }
  if (!route || !route->supports(peek->api_version)) {
    RLOG_WARN("closing connection from %s: unsupported API key %d version %d", peer_.c_str(),
              peek->api_key, peek->api_version);
    co_return false;
  }
  header.decode(served->reader, proto::request_header_version(route->is_flexible(peek->api_version)));
  if (!served->reader.ok()) {
    RLOG_WARN("closing connection from %s: malformed request header", peer_.c_str());
    co_return false;
  }

  served->route = route;
  broker_.request_counters().count(header.api_key, header.api_version);
  served->ctx.emplace(RequestContext{broker_, header, client_host_, listener_name_});
  served->ctx->principal = principal_;
  served->ctx->request_size = size;
  served->ctx->release_order = [weak = std::weak_ptr<ServedRequest>(served)] {
    if (auto s = weak.lock(); s && !s->released) {
      s->released = true;
      s->changed();
    }
  };
  served->out.bytes.resize(4);  // size prefix, filled in by finish()
  if (broker_.quotas().measure_request_time()) {
    served->thread_time = std::make_shared<std::chrono::steady_clock::duration>();
    served->ctx->thread_time = served->thread_time.get();
    asio::any_io_executor timed = TimedExecutor(executor, served->thread_time);
    asio::co_spawn(timed, run_handler(shared_from_this(), served), asio::detached);
  } else {
    asio::co_spawn(executor, run_handler(shared_from_this(), served), asio::detached);
  }
  co_await served->wait_released_or_done();
  if (!served->done) {
    // Released: its response keeps this place in the queue.
    std::erase_if(released_, [](const auto& s) { return s->done; });
    released_.push_back(served);
    OutboundResponse placeholder;
    placeholder.pending = std::move(served);
    co_return co_await queue(std::move(placeholder));
  }
  OutboundResponse out;
  if (!finish(*served, out)) co_return false;
  if (out.bytes.empty()) {  // no response (Produce acks=0)
    record_time(out);
    --unanswered_;
    co_return true;
  }
  co_return co_await queue(std::move(out));
}

awaitable<void> Connection::run_handler(std::shared_ptr<Connection> self, std::shared_ptr<ServedRequest> served) {
  proto::Writer writer(served->out.bytes);
  try {
    served->ok = co_await served->route->serve(*served->ctx, served->reader, writer);
  } catch (const std::exception& e) {
    served->failure = e.what();
  }
  served->out.splices = writer.splices();
  // The mute starts as the handler ends, before anything waiting on it
  // (drain_released, the response loop) resumes.
  if (const int32_t throttle = served->ctx->throttle_time_ms; throttle > 0)
    self->throttled_until_ = std::max(self->throttled_until_,
                                      std::chrono::steady_clock::now() + std::chrono::milliseconds(throttle));
  served->done = true;
  served->changed();
}

bool Connection::finish(ServedRequest& served, OutboundResponse& out) {
  const char* api = served.route->name;
  const int16_t version = served.header.api_version;
  if (!served.failure.empty()) {
    // A handler that throws has hit a broken invariant, not bad input; the
    // request cannot be answered, so the connection goes, but never silently.
    RLOG_WARN("closing connection from %s: %s v%d request failed: %s", peer_.c_str(), api, version,
              served.failure.c_str());
    return false;
  }
  if (!served.ok) {
    RLOG_WARN("closing connection from %s: malformed %s v%d request (%s)", peer_.c_str(), api, version,
              served.reader.error() ? served.reader.error() : "undecodable");
    return false;
  }
  RequestContext& ctx = *served.ctx;
  if (ctx.close_connection) return false;
  if (!ctx.send_response) {
    out = OutboundResponse{};
  } else {
    out = std::move(served.out);
  }
  out.api_key = served.header.api_key;
  out.api_version = version;
  out.received = served.received;
  if (!ctx.send_response) return true;  // empty bytes: nothing to send
  size_t body = out.bytes.size() - 4;
  for (auto& s : out.splices) body += static_cast<size_t>(s.region.length);
  if (body > INT32_MAX) {
    // The size prefix is an int32: such a response cannot be framed. The
    // handlers' limits (fetch.max.bytes) stay far below this; should one
    // not, the client loses the connection instead of reading a corrupt frame.
    RLOG_ERROR("closing connection from %s: %s v%d response of %zu bytes exceeds the largest frame", peer_.c_str(),
               api, version, body);
    return false;
  }
  put_size_prefix(out.bytes, body);
  out.keepalive = served.frame;
  return true;
}

awaitable<void> Connection::wait_out_throttle() {
  // A client over its quota is served no further until its throttle time
  // has passed (KIP-219: Kafka mutes the channel); its response has gone.
  while (!closed_ && throttled_until_ > std::chrono::steady_clock::now()) {
    throttle_timer_.expires_at(throttled_until_);
    co_await throttle_timer_.async_wait(as_tuple_awaitable);
  }
}

awaitable<void> Connection::drain_released() {
  for (auto& s : std::exchange(released_, {})) co_await s->wait_done();
}

awaitable<bool> Connection::answer_unsupported_api_versions(const proto::RequestHeader& header) {
  const ApiRoute* route = find_route(proto::kApiVersionsKey);
  proto::ApiVersionsResponse resp;
  resp.error_code = static_cast<int16_t>(proto::ErrorCode::unsupported_version);
  resp.api_keys.push_back({route->key, route->min_version, route->max_version, {}});
  OutboundResponse out;
  out.bytes.resize(4);
  proto::Writer w(out.bytes);
  proto::ResponseHeader{header.correlation_id, {}}.encode(w, 0);
  resp.encode(w, 0);
  put_size_prefix(out.bytes, out.bytes.size() - 4);
  co_return co_await queue(std::move(out));
}

awaitable<bool> Connection::queue(OutboundResponse response) {
  auto [ec] = co_await responses_.async_send(error_code{}, std::move(response), as_tuple_awaitable);
  co_return !ec;
}

awaitable<void> Connection::response_loop() {
  for (;;) {
    auto [ec, response] = co_await responses_.async_receive(as_tuple_awaitable);
    if (ec || response.end_of_stream) break;
    if (auto served = std::move(response.pending)) {
      co_await served->wait_done();
      if (!finish(*served, response)) break;
      if (response.bytes.empty()) {  // no response after all
        record_time(response);
        --unanswered_;
        continue;
      }
    }
    try {
      co_await write_response(response);
    } catch (const boost::system::system_error&) {
      break;  // the peer went away
    }
    --unanswered_;
    last_activity_ = std::chrono::steady_clock::now();
    record_time(response);
  }
  close();
}

void Connection::record_time(const OutboundResponse& response) {
  if (response.api_key < 0) return;  // not a request's (SASL tokens, unsupported ApiVersions)
  broker_.request_times().record(response.api_key, response.api_version,
                                 std::chrono::steady_clock::now() - response.received);
}

awaitable<void> Connection::write_response(OutboundResponse& r) {
  size_t from = 0;
  for (auto& splice : r.splices) {
    if (splice.at > from) co_await transport_->write(asio::buffer(r.bytes.data() + from, splice.at - from));
    from = splice.at;
    co_await transport_->write_file(splice.region.fd, splice.region.offset, static_cast<size_t>(splice.region.length));
  }
  if (from < r.bytes.size()) co_await transport_->write(asio::buffer(r.bytes.data() + from, r.bytes.size() - from));
}

awaitable<void> Connection::idle_watchdog() {
  const int64_t idle_ms = broker_.config().get_long("connections.max.idle.ms");
  asio::steady_timer timer(transport_->socket().get_executor());
  if (idle_ms < 0 || idle_ms > kNeverIdleMs) {
    // Kafka's Selector keeps no idle expiry at all for a negative value:
    // the connection never expires. Wait only to be cancelled.
    timer.expires_at(std::chrono::steady_clock::time_point::max());
    co_await timer.async_wait(as_tuple_awaitable);
    co_return;
  }
  const auto idle = std::chrono::milliseconds(idle_ms);
  for (;;) {
    timer.expires_at(last_activity_ + idle);
    auto [ec] = co_await timer.async_wait(as_tuple_awaitable);
    // Cancelled: the request and response loops are done, and so is this
    // watchdog (waiting on would hold the connection open until it expires).
    if (ec == asio::error::operation_aborted || closed_) co_return;
    // Kafka's processor expires a connection after a poll (up to 300 ms)
    // that saw no activity on it, so even at 0 a client that sends its
    // request right after connecting is served: look again one poll later.
    const auto seen = last_activity_;
    timer.expires_after(kIdlePoll);
    auto [ec2] = co_await timer.async_wait(as_tuple_awaitable);
    if (ec2 == asio::error::operation_aborted || closed_) co_return;
    // Idle: no read and no completed write for longer than the period (a
    // client that stopped reading its responses is idle too), no bytes
    // waiting in the socket for the request loop, and no request still
    // being served.
    const bool bytes_waiting = transport_->bytes_waiting();
    if (last_activity_ == seen && std::chrono::steady_clock::now() - last_activity_ > idle && !bytes_waiting &&
        unanswered_ == 0) {
      RLOG_INFO("closing connection from %s: idle for more than connections.max.idle.ms=%lld", peer_.c_str(),
                static_cast<long long>(idle_ms));
      co_return;
    }
  }
}

}  // namespace runnel::broker
