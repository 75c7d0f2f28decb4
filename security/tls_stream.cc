#include "security/tls_stream.h"

#include <openssl/err.h>
#include <sys/socket.h>

#include <algorithm>
#include <climits>
#include <stdexcept>

#include <boost/asio/ssl/error.hpp>

namespace runnel::security {

namespace {

using broker::as_tuple_awaitable;

// One socket read's worth: a few TLS records, so a large produce request
// takes a quarter of the reads it took through Asio's 17 KiB buffer.
constexpr size_t kReadChunk = 64 * 1024;

}  // namespace

TlsStream::TlsStream(tcp::socket& socket, SSL_CTX* context, Side side)
    : socket_(socket),
      ssl_(SSL_new(context)),
      rbio_(BIO_new(BIO_s_mem())),
      wbio_(BIO_new(BIO_s_mem())),
      flushed_(socket.get_executor(), asio::steady_timer::time_point::max()) {
  if (!ssl_ || !rbio_ || !wbio_) {
    BIO_free(rbio_);
    BIO_free(wbio_);
    SSL_free(ssl_);
    throw std::runtime_error("OpenSSL could not make a TLS stream (out of memory)");
  }
  // An empty read BIO means "wait for the socket", never end of stream.
  BIO_set_mem_eof_return(rbio_, -1);
  SSL_set_bio(ssl_, rbio_, wbio_);  // the SSL owns both now
  // Idle connections give their record buffers back.
  SSL_set_mode(ssl_, SSL_MODE_RELEASE_BUFFERS);
  if (side == Side::server)
    SSL_set_accept_state(ssl_);
  else
    SSL_set_connect_state(ssl_);
}

TlsStream::~TlsStream() { SSL_free(ssl_); }

// `err` is SSL_get_error's answer to a failed call, made before anything
// else touched OpenSSL's error queue (the earliest error is the reason).
error_code TlsStream::ssl_error(int err) {
  if (err == SSL_ERROR_ZERO_RETURN) return asio::error::eof;  // the peer's close_notify
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL) failed_ = true;
  if (code != 0) return error_code(static_cast<int>(code), asio::error::get_ssl_category());
  return asio::ssl::error::stream_truncated;
}

awaitable<error_code> TlsStream::handshake() {
  while (true) {
    ERR_clear_error();
    const int rc = SSL_do_handshake(ssl_);
    const int err = rc == 1 ? SSL_ERROR_NONE : SSL_get_error(ssl_, rc);
    const error_code ec = err == SSL_ERROR_NONE || err == SSL_ERROR_WANT_READ ? error_code() : ssl_error(err);
    // Every step's output goes now: the next flight, an alert on failure,
    // the server's session tickets once done.
    const error_code sent = co_await flush();
    if (ec) co_return ec;
    if (sent || rc == 1) co_return sent;
    if (auto got = co_await fill()) co_return got;
  }
}

awaitable<error_code> TlsStream::read(asio::mutable_buffer buffer) {
  auto* at = static_cast<uint8_t*>(buffer.data());
  size_t left = buffer.size();
  while (left > 0) {
    ERR_clear_error();
    const int n = SSL_read(ssl_, at, static_cast<int>(std::min<size_t>(left, INT_MAX)));
    const int err = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl_, n);
    error_code ec = err == SSL_ERROR_NONE || err == SSL_ERROR_WANT_READ ? error_code() : ssl_error(err);
    // Reading may write: a KeyUpdate's answer, an alert.
    if (BIO_ctrl_pending(wbio_) > 0) {
      const error_code sent = co_await flush();
      if (!ec) ec = sent;
    }
    if (ec) co_return ec;
    if (n > 0) {
      at += n;
      left -= static_cast<size_t>(n);
    } else if (auto got = co_await fill()) {
      co_return got;
    }
  }
  co_return error_code();
}

awaitable<void> TlsStream::write(asio::const_buffer buffer) {
  auto* at = static_cast<const uint8_t*>(buffer.data());
  size_t left = buffer.size();
  while (left > 0) {
    // Without SSL_MODE_ENABLE_PARTIAL_WRITE, SSL_write takes all of it.
    ERR_clear_error();
    const int n = SSL_write(ssl_, at, static_cast<int>(std::min(left, kMaxWrite)));
    const error_code ec = n > 0 ? error_code() : ssl_error(SSL_get_error(ssl_, n));
    const error_code sent = co_await flush();  // an alert, if it failed
    if (ec || sent) throw boost::system::system_error(ec ? ec : sent);
    at += n;
    left -= static_cast<size_t>(n);
  }
}

bool TlsStream::bytes_held() { return SSL_pending(ssl_) > 0 || BIO_ctrl_pending(rbio_) > 0; }

void TlsStream::send_close_notify() noexcept {
  // Not after a fatal error (OpenSSL forbids SSL_shutdown then), nor
  // before the handshake is done; and not while a flush is sending, as the
  // close_notify would cut into its records.
  if (failed_ || flushing_ || write_error_ || !SSL_is_init_finished(ssl_)) return;
  ERR_clear_error();
  SSL_shutdown(ssl_);
  ERR_clear_error();
  // One send that does not wait: the socket closes next, so what does not
  // fit in its buffer is lost, as with any best-effort close.
  char* data = nullptr;
  const long size = BIO_get_mem_data(wbio_, &data);
  if (size > 0) ::send(socket_.native_handle(), data, static_cast<size_t>(size), MSG_DONTWAIT | MSG_NOSIGNAL);
}

// Sends everything in the write BIO, in order: one coroutine sends at a
// time (the BIO's bytes taken out whole, then one async write); the others
// wait for it to end and look again, so bytes written meanwhile go next.
awaitable<error_code> TlsStream::flush() {
  while (!write_error_) {
    if (flushing_) {
      co_await flushed_.async_wait(as_tuple_awaitable);  // cancelled when that flush ends
      continue;
    }
    const size_t pending = BIO_ctrl_pending(wbio_);
    if (pending == 0) break;
    flushing_ = true;
    out_.resize(pending);
    BIO_read(wbio_, out_.data(), static_cast<int>(pending));
    auto [ec, n] = co_await asio::async_write(socket_, asio::buffer(out_), as_tuple_awaitable);
    flushing_ = false;
    write_error_ = ec;
    flushed_.cancel();
  }
  co_return write_error_;
}

// One socket read into the read BIO.
awaitable<error_code> TlsStream::fill() {
  in_.resize(kReadChunk);
  auto [ec, n] = co_await socket_.async_read_some(asio::buffer(in_), as_tuple_awaitable);
  if (ec == asio::error::eof) co_return asio::ssl::error::stream_truncated;  // closed without close_notify
  if (ec) co_return ec;
  BIO_write(rbio_, in_.data(), static_cast<int>(n));
  co_return error_code();
}

}  // namespace runnel::security
