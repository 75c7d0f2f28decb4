// How the CLI reaches a listener that is not PLAINTEXT: the -X keys
// librdkafka (and so kcat) reads for it, with its defaults:
//   security.protocol          PLAINTEXT | SSL | SASL_PLAINTEXT | SASL_SSL
//   sasl.mechanism(s)          PLAIN | SCRAM-SHA-256 | SCRAM-SHA-512 (default GSSAPI,
//                              which the CLI, like Runnel, does not speak)
//   sasl.username, sasl.password
//   ssl.ca.location            PEM file of the CAs to trust (default: the system's)
//   ssl.certificate.location, ssl.key.location, ssl.key.password   a client certificate (mTLS)
//   ssl.endpoint.identification.algorithm   https (default: the certificate must
//                              name the host connected to) | none
// Checked once, before any connection: a missing password or an unknown
// protocol is a usage error, not a failed connect.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "cli/client_config.h"

namespace runnel::cli {

struct ClientSecurity {
  bool tls = false;
  bool verify_host = true;
  std::string sasl_mechanism;  // empty: no SASL
  std::string sasl_username;
  std::string sasl_password;
  std::string ca_location, certificate_location, key_location, key_password;

  static ClientSecurity from(const ClientConfig& config);

  // A client context with the CAs and certificate above; UsageError naming
  // the file that cannot be read.
  std::shared_ptr<boost::asio::ssl::context> tls_context() const;
};

}  // namespace runnel::cli
