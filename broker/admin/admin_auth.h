// Who an admin request comes from, and whether it may be served.
//
// TLS: an https:// admin listener takes its TLS from the ssl.* configs, each
// overridable for it alone as listener.name.https.ssl.* (the scheme is the
// admin listener's name, as PLAINTEXT/SSL name Kafka's). With
// ssl.client.auth=required (or requested, when a certificate comes) the
// client certificate's subject, mapped by ssl.principal.mapping.rules, is
// the request's principal, as on a Kafka SSL listener.
//
// HTTP Basic: with runnel.admin.authentication.method=BASIC (the key REST
// Proxy names authentication.method) every path but those of
// runnel.admin.authentication.skip.paths needs an Authorization: Basic
// header whose user and password match the user's SCRAM credential (either
// mechanism), the users kafka-configs manages, so a REST client and a
// Kafka client of one user are one principal, User:<name>, to the ACLs.
// The check derives SCRAM's StoredKey from the password (PBKDF2 at the
// credential's iterations); a password verified against a credential is
// remembered (as an HMAC under a per-process key, never in clear) until
// that credential changes, so a keep-alive REST producer pays the PBKDF2
// once, not per request.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <boost/asio/ssl/context.hpp>

#include "broker/asio.h"
#include "broker/config.h"
#include "security/principal.h"
#include "security/sasl/scram_credential.h"
#include "security/ssl_principal_mapper.h"

namespace runnel::broker::admin {

// A user's stored credential for a mechanism (nullopt: none).
using CredentialLookup = std::function<std::optional<security::sasl::ScramCredential>(
    const std::string& user, security::sasl::ScramMechanism mechanism)>;

// The TLS of the https:// admin listeners (nullptr when there is none).
// Throws ConfigError naming the key.
std::shared_ptr<asio::ssl::context> admin_ssl_context(const BrokerConfig& config);

// "Basic <base64(user:password)>" split; nullopt for any other header.
struct BasicCredentials {
  std::string user;
  std::string password;
};
std::optional<BasicCredentials> parse_basic_authorization(std::string_view header);

class AdminAuthenticator {
 public:
  // Throws ConfigError (an unknown method, bad mapping rules).
  AdminAuthenticator(const BrokerConfig& config, CredentialLookup lookup);

  // Whether a request for `path` must carry Basic credentials.
  bool requires_basic(std::string_view path) const;
  // The principal of valid Basic credentials in an Authorization header.
  std::optional<security::KafkaPrincipal> basic(std::string_view authorization);
  // The principal of a TLS client certificate subject; nullopt when no
  // mapping rule applies (the connection is refused, as Kafka refuses it).
  std::optional<security::KafkaPrincipal> certificate(const std::string& subject_dn) const;

 private:
  bool matches(const std::string& user, std::string_view password, security::sasl::ScramMechanism m,
               const security::sasl::ScramCredential& credential);
  std::vector<uint8_t> password_mac(std::string_view password) const;

  static constexpr size_t kMaxRemembered = 4096;
  struct Remembered {
    security::sasl::ScramMechanism mechanism;
    security::sasl::ScramCredential credential;
    std::vector<uint8_t> password_mac;
  };

  bool basic_ = false;
  std::vector<std::string> skip_paths_;
  std::optional<security::SslPrincipalMapper> mapper_;
  CredentialLookup lookup_;
  std::vector<uint8_t> mac_key_;  // random per process
  std::unordered_map<std::string, Remembered> remembered_;
};

}  // namespace runnel::broker::admin
