// One client connection: reads size-prefixed request frames, serves them one
// at a time in arrival order (as Kafka does, so a producer's pipelined
// batches append in order), and sends the responses in the same order.
//
// Two coroutines share the socket: the request loop (read frame, decode,
// handle, queue the encoded response) and the response loop (wait for the
// response to be ready, e.g. an acks=all fsync, then write it, with sendfile
// for file regions of Fetch responses on plaintext). Handing responses to a second loop
// lets the next request be read and served while an earlier one waits for
// its fsync or is still being written.
//
// The bytes go through the listener's security::TransportLayer (plain TCP
// or TLS), built by its ChannelBuilder, whose handshake comes before the
// first request and which names the principal every request carries. On a
// SASL listener the frames go to a SaslServerAuthenticator until the client
// has authenticated, and again when it re-authenticates (KIP-368).
#pragma once

#include <chrono>
#include <memory>

#include "broker/asio.h"
#include "broker/request_context.h"
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

struct OutboundResponse {
  protocol::Bytes bytes;  // starts with the 4-byte size prefix
  std::vector<protocol::Writer::Splice> splices;
  std::function<awaitable<bool>()> before_send;
  std::shared_ptr<const void> keepalive;  // request frame and anything the response views
  bool end_of_stream = false;             // no more responses follow
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

 private:
  // The security handshake and the principal it yields; false: refused.
  awaitable<bool> authenticate();
  awaitable<void> request_loop();
  awaitable<void> response_loop();
  awaitable<void> idle_watchdog();
  // Serves one frame; false means close the connection.
  awaitable<bool> serve(std::shared_ptr<uint8_t[]> frame, size_t size);
  // A frame of the SASL exchange; false means close the connection.
  awaitable<bool> serve_sasl(std::shared_ptr<uint8_t[]> frame, size_t size);
  awaitable<bool> serve_api(std::shared_ptr<uint8_t[]> frame, size_t size);
  awaitable<bool> answer_unsupported_api_versions(const protocol::RequestHeader& header);
  awaitable<bool> queue(OutboundResponse response);
  awaitable<void> write_response(OutboundResponse& response);

  std::shared_ptr<const security::ChannelBuilder> channel_builder_;
  std::unique_ptr<security::TransportLayer> transport_;
  std::unique_ptr<SaslServerAuthenticator> sasl_;  // SASL listeners only
  Broker& broker_;
  std::string listener_name_;
  security::KafkaPrincipal principal_;
  std::string peer_;
  using Channel = asio::experimental::channel<void(error_code, OutboundResponse)>;
  Channel responses_;
  std::chrono::steady_clock::time_point last_activity_;
  size_t unanswered_ = 0;  // requests read whose response is not yet written
  bool closed_ = false;
  bool stop_reading_ = false;
};

}  // namespace runnel::broker
