// A synchronous Kafka client for tests: one blocking TCP connection to
// 127.0.0.1, requests encoded and responses decoded by the generated codec
// (protocol/messages), every send and receive bounded by a timeout.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "protocol/header.h"

namespace runnel::broker::testing {

class KafkaClient {
 public:
  explicit KafkaClient(uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(30),
                       std::string client_id = "runnel-test")
      : client_id_(std::move(client_id)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) fail("socket");
    timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) fail("connect");
  }
  ~KafkaClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  KafkaClient(const KafkaClient&) = delete;
  KafkaClient& operator=(const KafkaClient&) = delete;

  // Sends `request` at `version` and returns its correlation id; the
  // response is read later with receive(), so a test can pipeline requests
  // or hold one open (a long-poll Fetch) while it does something else.
  template <typename Api>
  int32_t send(const typename Api::Request& request, int16_t version) {
    protocol::Bytes frame(4);
    protocol::Writer w(frame);
    protocol::RequestHeader header{Api::key, version, next_correlation_id_++, client_id_, {}};
    header.encode(w, protocol::request_header_version(Api::is_flexible(version)));
    request.encode(w, version);
    uint32_t size = htonl(static_cast<uint32_t>(frame.size() - 4));
    std::memcpy(frame.data(), &size, 4);
    write_all(frame.data(), frame.size());
    return header.correlation_id;
  }

  // Reads the next response, which must answer `correlation_id` (Kafka
  // answers a connection's requests in order) at `version`.
  template <typename Api>
  typename Api::Response receive(int32_t correlation_id, int16_t version) {
    uint32_t size = 0;
    read_all(&size, 4);
    // The body outlives this call: a response's records are views into it.
    auto body = std::make_shared<protocol::Bytes>(ntohl(size));
    read_all(body->data(), body->size());
    protocol::Reader r(protocol::ByteView(body->data(), body->size()), body);
    protocol::ResponseHeader header;
    header.decode(r, protocol::response_header_version(Api::key, Api::is_flexible(version)));
    typename Api::Response response;
    response.decode(r, version);
    if (!r.ok()) throw std::runtime_error(std::string("malformed response: ") + r.error());
    if (header.correlation_id != correlation_id)
      throw std::runtime_error("response to correlation id " + std::to_string(header.correlation_id) + ", expected " +
                               std::to_string(correlation_id));
    return response;
  }

  template <typename Api>
  typename Api::Response call(const typename Api::Request& request, int16_t version) {
    return receive<Api>(send<Api>(request, version), version);
  }

 private:
  [[noreturn]] static void fail(const char* what) {
    throw std::runtime_error(std::string(what) + ": " + std::strerror(errno));
  }
  void write_all(const uint8_t* p, size_t n) {
    while (n > 0) {
      ssize_t k = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (k < 0 && errno == EINTR) continue;
      if (k <= 0) fail("send");
      p += k;
      n -= static_cast<size_t>(k);
    }
  }
  void read_all(void* out, size_t n) {
    auto* p = static_cast<uint8_t*>(out);
    while (n > 0) {
      ssize_t k = ::recv(fd_, p, n, 0);
      if (k < 0 && errno == EINTR) continue;
      if (k == 0) throw std::runtime_error("the broker closed the connection");
      if (k < 0) fail("recv (timed out?)");
      p += k;
      n -= static_cast<size_t>(k);
    }
  }

  std::string client_id_;  // every request's header carries it
  int fd_ = -1;
  int32_t next_correlation_id_ = 1;
};

}  // namespace runnel::broker::testing
