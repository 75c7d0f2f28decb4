// TLS on a TCP socket: OpenSSL does the protocol and the crypto on two
// memory BIOs (BIO_s_mem), and this only moves bytes between them and the
// socket.
//
// Why not Asio's ssl::stream: its engine keeps one ~17 KiB output buffer,
// so every TLS record (16 KiB) became its own send(2), and reads came in
// pieces of that size too. Here the write BIO grows to hold all the records
// of one write, and they go to the socket in one async write.
//
// One read and one write may be pending at the same time (a connection's
// request and response loops), on one thread: OpenSSL calls never overlap,
// but a read's SSL_read may produce output (a KeyUpdate answer) while a
// write is suspended sending, so flushes of the write BIO are serialized.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "broker/asio.h"

namespace runnel::security {

namespace asio = broker::asio;
using broker::awaitable;
using broker::error_code;
using broker::tcp;

class TlsStream {
 public:
  enum class Side { server, client };
  // The most one SSL_write takes (and one flush sends): a file chunk, so
  // the write BIO stays this small whatever the size of a write.
  static constexpr size_t kMaxWrite = 256 * 1024;
  // `socket` outlives the stream; the SSL is made from `context`.
  TlsStream(tcp::socket& socket, SSL_CTX* context, Side side);
  ~TlsStream();
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  SSL* native_handle() { return ssl_; }

  // The whole handshake; the error is OpenSSL's (asio.ssl category) or
  // the socket's.
  awaitable<error_code> handshake();
  // Fills `buffer` completely. asio::error::eof once the peer sent
  // close_notify; asio::ssl::error::stream_truncated when the socket
  // ended without it.
  awaitable<error_code> read(asio::mutable_buffer buffer);
  // Encrypts and sends all of `buffer`; throws boost::system::system_error.
  awaitable<void> write(asio::const_buffer buffer);
  // Decrypted bytes held, or encrypted bytes not yet decrypted.
  bool bytes_held();
  // A close_notify, sent without waiting (best effort); the caller closes
  // the socket. Never blocks or throws.
  void send_close_notify() noexcept;

 private:
  error_code ssl_error(int rc);
  awaitable<error_code> flush();
  awaitable<error_code> fill();

  tcp::socket& socket_;
  SSL* ssl_;
  BIO* rbio_;  // ciphertext from the socket, for OpenSSL to read
  BIO* wbio_;  // ciphertext OpenSSL wrote, for the socket
  bool failed_ = false;    // a fatal TLS error: no SSL_shutdown then
  bool flushing_ = false;  // a coroutine is sending out_
  error_code write_error_;  // the socket failed a write: every later flush fails
  asio::steady_timer flushed_;  // cancelled when a flush ends, to wake who waits for it
  std::vector<uint8_t> out_;  // the write BIO's bytes on their way to the socket
  std::vector<uint8_t> in_;   // the socket's bytes on their way to the read BIO
};

}  // namespace runnel::security
