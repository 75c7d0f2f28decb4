#include <string>

#include "security/sasl/oauthbearer_sasl_server.h"
#include "security/sasl/plain_sasl_server.h"
#include "security/sasl/scram_sasl_server.h"

namespace runnel::security::sasl {

std::string generic_authentication_failure(const char* mechanism) {
  return std::string("Authentication failed during authentication due to invalid credentials with SASL mechanism ") +
         mechanism;
}

std::unique_ptr<SaslServer> create_sasl_server(const std::string& mechanism, const SaslServerCallbacks& callbacks) {
  if (mechanism == kPlain) return std::make_unique<PlainSaslServer>(callbacks.plain_users);
  if (mechanism == kOAuthBearer) return std::make_unique<OAuthBearerSaslServer>(callbacks);
  if (auto scram = scram_mechanism_from_name(mechanism); scram != ScramMechanism::unknown)
    return std::make_unique<ScramSaslServer>(scram, callbacks);
  return nullptr;
}

}  // namespace runnel::security::sasl
