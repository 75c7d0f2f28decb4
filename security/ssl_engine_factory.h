// Kafka's DefaultSslEngineFactory for a broker listener, on OpenSSL: the
// server's TLS context from the listener's ssl.* configs, with Kafka's names,
// defaults and startup errors.
//
//   ssl.keystore.type          PEM or PKCS12 (Kafka's default JKS: a PKCS12
//                              file is read, as Java reads one under that
//                              type; a real JKS file is refused with how to
//                              convert it)
//   ssl.keystore.location      PEM: private key and certificate chain in one
//                              file; PKCS12: the store
//   ssl.keystore.password      PKCS12 only (Kafka refuses it with PEM)
//   ssl.key.password           an encrypted PEM key's password; for PKCS12,
//                              tried when the store password does not open it
//   ssl.keystore.key,          PEM inline, instead of a location
//   ssl.keystore.certificate.chain
//   ssl.truststore.type, .location, .password, ssl.truststore.certificates
//                              who may sign client certificates (unset: the
//                              system's CAs, as Java's cacerts)
//   ssl.client.auth            none | requested | required
//   ssl.enabled.protocols      TLSv1.2,TLSv1.3 by default
//   ssl.cipher.suites          IANA names as Java takes them (OpenSSL names
//                              too); unset: OpenSSL's defaults
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include <boost/asio/ssl/context.hpp>

namespace runnel::security {

// A listener's effective value of an ssl.* key (its listener.name.<name>.
// override, else the broker's, else Kafka's default); nullopt when null.
using SslConfigLookup = std::function<std::optional<std::string>(const std::string& key)>;

// A configuration that cannot serve TLS: the message names the key.
class SslConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

std::shared_ptr<boost::asio::ssl::context> create_server_ssl_context(const SslConfigLookup& config);

// OpenSSL's queued errors, oldest first ("no detail from OpenSSL" when
// none), and the queue emptied.
std::string openssl_errors();

// The client side, for a broker's connections to other brokers (Kafka's
// SslFactory in client mode on the inter-broker listener's configs): the
// server must present a certificate the trust store vouches for; the key
// store, when set, is this broker's client certificate (mTLS).
std::shared_ptr<boost::asio::ssl::context> create_client_ssl_context(const SslConfigLookup& config);

}  // namespace runnel::security
