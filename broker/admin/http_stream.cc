#include "broker/admin/http_stream.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "security/transport_layer.h"

namespace runnel::broker::admin {

awaitable<error_code> HttpStream::handshake(std::chrono::steady_clock::duration limit) {
  if (!tls_) co_return error_code();
  expires_after(limit);
  auto [ec] = co_await tls_->async_handshake(asio::ssl::stream_base::server, as_tuple_awaitable);
  co_return ec;
}

std::optional<std::string> HttpStream::peer_subject() {
  if (!tls_) return std::nullopt;
  // The context verifies the chain (ssl.client.auth requested/required with
  // a trust store); a certificate OpenSSL did not accept is no identity.
  SSL* ssl = tls_->native_handle();
  if (SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  X509* cert = SSL_get1_peer_certificate(ssl);
  if (!cert) return std::nullopt;
  std::string subject = security::rfc2253_subject(cert);
  X509_free(cert);
  return subject;
}

awaitable<void> HttpStream::shutdown() {
  if (tls_) {
    // A client that vanished must not hold the session: one second for
    // its close_notify answer, and the error (usually truncation) ignored.
    expires_after(std::chrono::seconds(1));
    auto [ec] = co_await tls_->async_shutdown(as_tuple_awaitable);
    (void)ec;
  }
  error_code ignored;
  socket().shutdown(tcp::socket::shutdown_send, ignored);
}

}  // namespace runnel::broker::admin
