// Kafka's TransportLayer: the bytes of one connection, plain TCP or TLS,
// behind one interface, so the connection's request and response loops are
// written once for every security protocol.
//
// Plain keeps the zero-copy path: memory goes out with write(2), file
// regions (Fetch records) with sendfile(2) from the segment to the socket.
// TLS must encrypt in user space, so a file region is read into memory
// (pread, in chunks) and written through OpenSSL on memory BIOs
// (security/tls_stream.h). One read and one write may be pending at the
// same time, as the connection's two loops need.
#pragma once

#include <openssl/x509.h>
#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ssl.hpp>

// Also the names asio, awaitable, error_code and tcp in this namespace.
#include "security/tls_stream.h"

namespace runnel::security {

class TransportLayer {
 public:
  explicit TransportLayer(tcp::socket socket) : socket_(std::move(socket)) {}
  virtual ~TransportLayer() = default;
  TransportLayer(const TransportLayer&) = delete;
  TransportLayer& operator=(const TransportLayer&) = delete;

  // The TCP socket under any TLS: options, addresses, readiness.
  tcp::socket& socket() { return socket_; }

  // The security handshake, before any request is read; plain has none.
  // Empty when it succeeded, else why the peer was refused.
  virtual awaitable<std::string> handshake() { co_return std::string(); }
  // Fills `buffer` completely; an error (end of stream included) ends the
  // connection.
  virtual awaitable<error_code> read(asio::mutable_buffer buffer) = 0;
  // Writes all of `buffer`; throws boost::system::system_error.
  virtual awaitable<void> write(asio::const_buffer buffer) = 0;
  // Writes `length` bytes of file `fd` from `offset`; throws system_error,
  // also when the file holds fewer bytes than that (it shrank under us).
  virtual awaitable<void> write_file(int fd, off_t offset, size_t length) = 0;
  // Bytes received and not yet read: in the socket, or decrypted and held
  // by TLS.
  virtual bool bytes_waiting();
  // The verified peer certificate's subject DN in RFC 2253 form, if the
  // peer sent one.
  virtual std::optional<std::string> peer_subject() { return std::nullopt; }

  // A pending read ends now (a graceful stop); writes still go out.
  void shutdown_receive();
  // Never blocks or throws.
  virtual void close();

 protected:
  tcp::socket socket_;
};

// PLAINTEXT: write(2) and sendfile(2) on the socket.
class PlaintextTransportLayer final : public TransportLayer {
 public:
  using TransportLayer::TransportLayer;
  awaitable<error_code> read(asio::mutable_buffer buffer) override;
  awaitable<void> write(asio::const_buffer buffer) override;
  awaitable<void> write_file(int fd, off_t offset, size_t length) override;
};

// SSL: TLS through OpenSSL, server side.
class SslTransportLayer final : public TransportLayer {
 public:
  // Which path Fetch records take through TLS, and why, for the log:
  // always the copy (pread, then OpenSSL encrypts). Kernel TLS with
  // SSL_sendfile needs OpenSSL to own the socket (a socket BIO), but
  // TlsStream feeds OpenSSL through memory BIOs; and the kernel must offer
  // the "tls" TCP ULP, which this reports too.
  static std::string fetch_path();

  SslTransportLayer(tcp::socket socket, std::shared_ptr<asio::ssl::context> context);
  // The client side (a broker connecting to another): `verify_host`, when
  // not empty, is the name or address the server's certificate must carry
  // (Kafka's ssl.endpoint.identification.algorithm=https).
  SslTransportLayer(tcp::socket socket, std::shared_ptr<asio::ssl::context> context, std::string verify_host);
  awaitable<std::string> handshake() override;
  awaitable<error_code> read(asio::mutable_buffer buffer) override;
  awaitable<void> write(asio::const_buffer buffer) override;
  awaitable<void> write_file(int fd, off_t offset, size_t length) override;
  bool bytes_waiting() override;
  std::optional<std::string> peer_subject() override;
  // A close_notify (best effort, without waiting), then the socket closes.
  void close() override;

 private:
  SslTransportLayer(tcp::socket socket, std::shared_ptr<asio::ssl::context> context, TlsStream::Side side);

  std::shared_ptr<asio::ssl::context> context_;  // outlives the stream
  TlsStream stream_;
  std::vector<uint8_t> file_buffer_;  // a file region's bytes on their way to TLS
};

// The subject DN of a certificate as Java's X500Principal.getName() writes
// it (RFC 2253: most specific first, comma separated, UTF-8 unescaped).
std::string rfc2253_subject(X509* cert);

}  // namespace runnel::security
