#include "cli/client_security.h"

#include <cctype>

#include "cli/kafka_errors.h"

namespace runnel::cli {

namespace ssl = boost::asio::ssl;

ClientSecurity ClientSecurity::from(const ClientConfig& config) {
  ClientSecurity s;
  std::string protocol = config.get("security.protocol", "PLAINTEXT");
  for (auto& c : protocol) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  bool sasl = false;
  if (protocol == "SSL") {
    s.tls = true;
  } else if (protocol == "SASL_PLAINTEXT") {
    sasl = true;
  } else if (protocol == "SASL_SSL") {
    s.tls = sasl = true;
  } else if (protocol != "PLAINTEXT") {
    throw UsageError("-X security.protocol=" + protocol + ": PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL");
  }
  if (sasl) {
    // librdkafka reads both spellings; sasl.mechanisms is its own.
    s.sasl_mechanism = config.get("sasl.mechanisms", config.get("sasl.mechanism", "GSSAPI"));
    if (s.sasl_mechanism != "PLAIN" && s.sasl_mechanism != "SCRAM-SHA-256" && s.sasl_mechanism != "SCRAM-SHA-512")
      throw UsageError("-X sasl.mechanism=" + s.sasl_mechanism + ": the CLI speaks PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512");
    s.sasl_username = config.get("sasl.username", "");
    s.sasl_password = config.get("sasl.password", "");
    if (s.sasl_username.empty() || !config.is_set("sasl.password"))
      throw UsageError("SASL " + s.sasl_mechanism + " needs -X sasl.username=... and -X sasl.password=...");
  } else if (config.is_set("sasl.username") || config.is_set("sasl.mechanism") || config.is_set("sasl.mechanisms")) {
    throw UsageError("-X sasl.* needs -X security.protocol=SASL_PLAINTEXT or SASL_SSL");
  }
  std::string algorithm = config.get("ssl.endpoint.identification.algorithm", "https");
  if (algorithm != "https" && algorithm != "none")
    throw UsageError("-X ssl.endpoint.identification.algorithm=" + algorithm + ": https or none");
  s.verify_host = algorithm == "https";
  s.ca_location = config.get("ssl.ca.location", "");
  s.certificate_location = config.get("ssl.certificate.location", "");
  s.key_location = config.get("ssl.key.location", "");
  s.key_password = config.get("ssl.key.password", "");
  if (s.certificate_location.empty() != s.key_location.empty())
    throw UsageError("a client certificate needs both -X ssl.certificate.location and -X ssl.key.location");
  return s;
}

std::shared_ptr<ssl::context> ClientSecurity::tls_context() const {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  ctx->set_verify_mode(ssl::verify_peer);
  boost::system::error_code ec;
  auto must = [&](const std::string& key, const std::string& file) {
    if (ec) throw UsageError("-X " + key + "=" + file + ": " + ec.message());
  };
  if (ca_location.empty()) {
    ctx->set_default_verify_paths(ec);
    must("ssl.ca.location", "(the system's CAs)");
  } else {
    ctx->load_verify_file(ca_location, ec);
    must("ssl.ca.location", ca_location);
  }
  if (!certificate_location.empty()) {
    if (!key_password.empty())
      ctx->set_password_callback([password = key_password](size_t, ssl::context::password_purpose) { return password; });
    ctx->use_certificate_chain_file(certificate_location, ec);
    must("ssl.certificate.location", certificate_location);
    ctx->use_private_key_file(key_location, ssl::context::pem, ec);
    must("ssl.key.location", key_location);
  }
  return ctx;
}

}  // namespace runnel::cli
