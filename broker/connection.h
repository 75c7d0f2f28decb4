// One client connection: reads size-prefixed request frames, serves them in
// arrival order (as Kafka does, so a producer's pipelined batches append in
// order), and sends the responses in the same order.
//
// Two coroutines share the socket: the request loop (read frame, decode,
// handle, queue the encoded response) and the response loop (wait for the
// response to be ready, e.g. an acks=all fsync, then write it, with sendfile
// for file regions of Fetch responses on plaintext). Handing responses to a second loop
// lets the next request be read and served while an earlier one waits for
// its fsync or is still being written.
//
// Kafka serves one request of a connection at a time, to the end: an
// acks=all Produce holds the connection until its records are replicated,
// so a producer's next batches queue behind that round trip. Runnel lets a
// handler release the connection's order once what must happen in order
// has (RequestContext::release_order: a Produce once its records are
// appended); the handler runs on and its response keeps its place in the
// queue, while the next request is read. Only a Produce may start while
// released ones still run (its appends come after theirs); any other
// request first waits for them all, so it sees what it would on Kafka.
//
// A frame's memory is taken as its bytes arrive (a size prefix alone
// reserves at most 1 MiB), and the frame must arrive whole within
// runnel.request.read.timeout.ms of its prefix: a client that announces a
// frame and stalls is cut then, not after connections.max.idle.ms.
//
// A response that carries a client-quota throttle (broker/quota_managers.h)
// goes out at once; the connection then reads no request until the
// throttle time has passed, as Kafka mutes a throttled channel (KIP-219).
//
// The bytes go through the listener's security::TransportLayer (plain TCP
// or TLS), built by its ChannelBuilder, whose handshake comes before the
// first request and which names the principal every request carries. On a
// SASL listener the frames go to a SaslServerAuthenticator until the client
// has authenticated, and again when it re-authenticates (KIP-368).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "broker/asio.h"
#include "broker/connection_quotas.h"
#include "broker/request_context.h"
#include "broker/request_memory.h"
#include "protocol/codec/writer.h"
#include "security/principal.h"

namespace runnel::security {
class ChannelBuilder;
class TransportLayer;
}  // namespace runnel::security

namespace runnel::broker {

class Broker;
class RequestMemory;
class SaslServerAuthenticator;
struct ServedRequest;  // connection.cc

struct OutboundResponse {
  protocol::Bytes bytes;  // starts with the 4-byte size prefix
  std::vector<protocol::Writer::Splice> splices;
  std::shared_ptr<const void> keepalive;  // request frame and anything the response views
  bool end_of_stream = false;             // no more responses follow
  // A request whose handler released the order and still runs: the
  // response loop waits for it and sends its response in this place.
  std::shared_ptr<ServedRequest> pending;
  // For TotalTimeMs: the request answered (api_key -1: none) and when its
  // last byte was read.
  int16_t api_key = -1;
  int16_t api_version = 0;
  std::chrono::steady_clock::time_point received;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, Broker& broker, std::string listener_name,
             std::shared_ptr<const security::ChannelBuilder> channel_builder);
  ~Connection();
  void start();
  void close();
  // Graceful stop: read no more requests; queued responses still go out.
  void stop_reading();
  size_t unanswered() const { return unanswered_; }
  // The connection's place in the connection quotas, given up when it closes.
  void hold(ConnectionQuotas::Slot slot) { slot_ = std::move(slot); }
  // When a request was last read or a response last written.
  std::chrono::steady_clock::time_point last_activity() const { return last_activity_; }
  const std::string& listener_name() const { return listener_name_; }

 private:
  // The security handshake and the principal it yields; false: refused.
  awaitable<bool> authenticate();
  awaitable<void> request_loop();
  awaitable<void> response_loop();
  awaitable<void> idle_watchdog();
  // A request frame of `size` bytes after its size prefix, in memory that
  // grows as the bytes arrive; null when the connection failed or the
  // frame missed its read deadline.
  // Reads a frame of `size` bytes, counting its buffer in `permit` as it grows.
  awaitable<std::shared_ptr<uint8_t[]>> read_frame(size_t size, RequestMemory::Permit& permit);
  // No more frames will be read: a wait for the request memory pool ends.
  void abandon_reading();
  void arm_read_deadline();
  // Serves one frame; false means close the connection.
  awaitable<bool> serve(std::shared_ptr<uint8_t[]> frame, size_t size, RequestMemory::Permit permit);
  // A frame of the SASL exchange; false means close the connection.
  awaitable<bool> serve_sasl(std::shared_ptr<uint8_t[]> frame, size_t size, RequestMemory::Permit permit);
  awaitable<bool> serve_api(std::shared_ptr<uint8_t[]> frame, size_t size, RequestMemory::Permit permit);
  // Runs the request's handler to its end (spawned by serve_api).
  static awaitable<void> run_handler(std::shared_ptr<Connection> self, std::shared_ptr<ServedRequest> served);
  // The handled request's response, made ready to queue; false: close the connection.
  bool finish(ServedRequest& served, OutboundResponse& out);
  // Returns once every released request has finished.
  awaitable<void> drain_released();
  // Waits while the connection is throttled (a quota's mute).
  awaitable<void> wait_out_throttle();
  awaitable<bool> answer_unsupported_api_versions(const protocol::RequestHeader& header);
  awaitable<bool> queue(OutboundResponse response);
  awaitable<void> write_response(OutboundResponse& response);
  void record_time(const OutboundResponse& response);

  std::shared_ptr<const security::ChannelBuilder> channel_builder_;
  std::unique_ptr<security::TransportLayer> transport_;
  std::unique_ptr<SaslServerAuthenticator> sasl_;  // SASL listeners only
  Broker& broker_;
  std::string listener_name_;
  security::KafkaPrincipal principal_;
  std::string peer_;         // address:port, for the log
  std::string client_host_;  // the address as Kafka writes it (ACL hosts, client.host)
  using Channel = asio::experimental::channel<void(error_code, OutboundResponse)>;
  Channel responses_;
  std::chrono::steady_clock::time_point last_activity_;
  asio::steady_timer read_deadline_;  // runnel.request.read.timeout.ms for the frame being read
  // Client quotas: no request is read before this (broker/quota_managers.h).
  std::chrono::steady_clock::time_point throttled_until_{};
  asio::steady_timer throttle_timer_;
  size_t unanswered_ = 0;  // requests read whose response is not yet written
  std::vector<std::shared_ptr<ServedRequest>> released_;  // handlers that released the order, maybe still running
  bool closed_ = false;
  bool stop_reading_ = false;
  bool reading_abandoned_ = false;  // closed or stopped: no frame will be read (abandon_reading)
  ConnectionQuotas::Slot slot_;
};

}  // namespace runnel::broker
