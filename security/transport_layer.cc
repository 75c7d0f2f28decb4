#include "security/transport_layer.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

namespace runnel::security {

namespace {

using broker::as_tuple_awaitable;

[[noreturn]] void throw_errno(int err) {
  throw boost::system::system_error(error_code(err, boost::system::system_category()));
}

}  // namespace

bool TransportLayer::bytes_waiting() {
  error_code ec;
  return socket_.available(ec) > 0;
}

void TransportLayer::shutdown_receive() {
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_receive, ec);
}

void TransportLayer::close() {
  error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

awaitable<error_code> PlaintextTransportLayer::read(asio::mutable_buffer buffer) {
  auto [ec, n] = co_await asio::async_read(socket_, buffer, as_tuple_awaitable);
  co_return ec;
}

awaitable<void> PlaintextTransportLayer::write(asio::const_buffer buffer) {
  co_await asio::async_write(socket_, buffer, asio::use_awaitable);
}

awaitable<void> PlaintextTransportLayer::write_file(int fd, off_t offset, size_t length) {
  // sendfile(2) from the segment straight to the socket: no copy in user space.
  while (length > 0) {
    ssize_t sent = ::sendfile(socket_.native_handle(), fd, &offset, length);
    if (sent > 0) {
      length -= static_cast<size_t>(sent);
    } else if (sent < 0 && (errno == EAGAIN || errno == EINTR)) {
      co_await socket_.async_wait(tcp::socket::wait_write, asio::use_awaitable);
    } else {
      // The file shrank under us (retention or truncation raced the read):
      // the frame can no longer be completed, so the connection must go.
      throw_errno(sent < 0 ? errno : EIO);
    }
  }
}

SslTransportLayer::SslTransportLayer(tcp::socket socket, std::shared_ptr<asio::ssl::context> context,
                                     TlsStream::Side side)
    : TransportLayer(std::move(socket)), context_(std::move(context)), stream_(socket_, context_->native_handle(), side) {}

SslTransportLayer::SslTransportLayer(tcp::socket socket, std::shared_ptr<asio::ssl::context> context)
    : SslTransportLayer(std::move(socket), std::move(context), TlsStream::Side::server) {}

SslTransportLayer::SslTransportLayer(tcp::socket socket, std::shared_ptr<asio::ssl::context> context,
                                     std::string verify_host)
    : SslTransportLayer(std::move(socket), std::move(context), TlsStream::Side::client) {
  if (verify_host.empty()) return;
  SSL* ssl = stream_.native_handle();
  error_code ec;
  asio::ip::make_address(verify_host, ec);
  if (!ec) {
    // An address is checked against the certificate's IP SANs.
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), verify_host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, verify_host.c_str());  // SNI
    SSL_set1_host(ssl, verify_host.c_str());
  }
}

awaitable<std::string> SslTransportLayer::handshake() {
  const error_code ec = co_await stream_.handshake();
  if (!ec) co_return std::string();
  std::string why = ec.message();
  // OpenSSL's error says only "certificate verify failed"; the verify
  // result says which check failed (expired, unknown issuer, ...).
  const long verify = SSL_get_verify_result(stream_.native_handle());
  if (verify != X509_V_OK) why += std::string(": ") + X509_verify_cert_error_string(verify);
  co_return why;
}

awaitable<error_code> SslTransportLayer::read(asio::mutable_buffer buffer) { return stream_.read(buffer); }

awaitable<void> SslTransportLayer::write(asio::const_buffer buffer) { return stream_.write(buffer); }

awaitable<void> SslTransportLayer::write_file(int fd, off_t offset, size_t length) {
  // A chunk is what one SSL_write takes: its records go out in one write.
  file_buffer_.resize(std::min(length, TlsStream::kMaxWrite));
  while (length > 0) {
    const size_t want = std::min(length, file_buffer_.size());
    ssize_t got = ::pread(fd, file_buffer_.data(), want, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw_errno(got < 0 ? errno : EIO);  // the file shrank under us, as for sendfile
    co_await stream_.write(asio::buffer(file_buffer_.data(), static_cast<size_t>(got)));
    offset += got;
    length -= static_cast<size_t>(got);
  }
}

bool SslTransportLayer::bytes_waiting() { return stream_.bytes_held() || TransportLayer::bytes_waiting(); }

void SslTransportLayer::close() {
  stream_.send_close_notify();
  TransportLayer::close();
}

std::optional<std::string> SslTransportLayer::peer_subject() {
  SSL* ssl = stream_.native_handle();
  X509* cert = SSL_get0_peer_certificate(ssl);
  // The handshake fails on a certificate that does not verify; this guards
  // against a configuration that lets one through.
  if (!cert || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  return rfc2253_subject(cert);
}

std::string SslTransportLayer::fetch_path() {
  std::ifstream ulps("/proc/sys/net/ipv4/tcp_available_ulp");
  std::string available, ulp;
  bool kernel_tls = false;
  while (ulps >> ulp) kernel_tls = kernel_tls || ulp == "tls";
  available = kernel_tls ? "the kernel offers kTLS" : "the kernel offers no kTLS (no \"tls\" TCP ULP loaded)";
  return "Fetch records are read into memory and encrypted by OpenSSL (copy path, not kTLS sendfile: " + available +
         ", and Runnel's TLS stream gives OpenSSL memory BIOs, which it cannot offload to the kernel)";
}

std::string rfc2253_subject(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  // XN_FLAG_RFC2253 escapes every non-ASCII byte; Java writes UTF-8 as it is.
  X509_NAME_print_ex(bio, X509_get_subject_name(cert), 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
  char* data = nullptr;
  long size = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(size));
  BIO_free(bio);
  return out;
}

}  // namespace runnel::security
