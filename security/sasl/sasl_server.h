// The broker's side of one SASL exchange (Java's javax.security.sasl.
// SaslServer as Kafka's SaslServerAuthenticator drives it): the client's
// tokens go in one at a time, challenges come out, until the exchange is
// complete or has failed. One object per connection and exchange.
//
// Mechanisms (Kafka's names): PLAIN (RFC 4616, users from the JAAS line),
// SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802/7677, credentials from the
// broker's store), OAUTHBEARER (RFC 7628, Kafka's unsecured-JWS validator).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "security/sasl/scram_credential.h"

namespace runnel::security::sasl {

// Kafka's SASL mechanism names.
inline constexpr const char* kPlain = "PLAIN";
inline constexpr const char* kScramSha256 = "SCRAM-SHA-256";
inline constexpr const char* kScramSha512 = "SCRAM-SHA-512";
inline constexpr const char* kOAuthBearer = "OAUTHBEARER";

struct SaslStep {
  Bytes challenge{};  // to send back (may be empty, e.g. PLAIN's success)
  bool complete = false;
  // Set when authentication failed: the message Kafka's authenticator puts
  // in SaslAuthenticate's ErrorMessage (SASL_AUTHENTICATION_FAILED), e.g.
  // "Authentication failed: Invalid username or password". The connection
  // is closed after it is sent.
  std::optional<std::string> error{};
  // The mechanism's own account of the failure, for the broker's log only:
  // where Kafka's mechanism raises a plain SaslException its authenticator
  // sends the generic "Authentication failed during authentication due to
  // invalid credentials with SASL mechanism <name>" instead (so as not to tell
  // an unauthenticated client whether a user exists), and this keeps the
  // detail. The same as `error` when Kafka sends the mechanism's message.
  std::string reason{};
};

// Kafka's message for a mechanism's SaslException; SaslServerAuthenticator
// says "re-authentication" instead during KIP-368 re-authentication.
std::string generic_authentication_failure(const char* mechanism);

class SaslServer {
 public:
  virtual ~SaslServer() = default;
  virtual const char* mechanism() const = 0;
  // One token from the client. Must never throw on bad input and never
  // read past `response`: anything malformed is a failed step.
  virtual SaslStep evaluate_response(std::span<const uint8_t> response) = 0;
  // After `complete`: the authenticated user, the principal's name
  // (Kafka's authorization id; User:<this>).
  virtual std::string authorization_id() const = 0;
  // After `complete`: when the credential stops being valid, in ms since
  // the epoch (OAUTHBEARER: the token's "exp"); nullopt when it does not
  // expire (PLAIN, SCRAM). KIP-368 caps the session lifetime by it.
  virtual std::optional<int64_t> credential_expiration_ms() const { return std::nullopt; }
};

// What the mechanisms look things up in; one per listener and mechanism,
// built from the listener's JAAS configuration and the broker's stores.
struct SaslServerCallbacks {
  // PLAIN: the JAAS options of the listener's PlainLoginModule
  // (user_<name>=<password> entries).
  std::map<std::string, std::string> plain_users;
  // SCRAM: the stored credential for a user and mechanism; nullopt for an
  // unknown user. Called on the connection's thread during the exchange.
  std::function<std::optional<ScramCredential>(const std::string& user, ScramMechanism)> scram_credential;
  // OAUTHBEARER: the unsecured validator's JAAS options
  // (unsecuredValidatorPrincipalClaimName, unsecuredValidatorScopeClaimName,
  // unsecuredValidatorRequiredScope, unsecuredValidatorAllowableClockSkewMs).
  std::map<std::string, std::string> oauthbearer_options;
  // Now, in ms since the epoch (a test clock can replace it).
  std::function<int64_t()> now_ms;
};

// A server for `mechanism` (one of the names above); nullptr for any other.
std::unique_ptr<SaslServer> create_sasl_server(const std::string& mechanism, const SaslServerCallbacks& callbacks);

}  // namespace runnel::security::sasl
