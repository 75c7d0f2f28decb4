// Kafka's OAuthBearerSaslServer (RFC 7628) with its unsecured validator.
// The client's initial response is n,[a=<authzid>],^Aauth=Bearer <token>^A
// [<key>=<value>^A]*^A. A refused token is not a failure yet: as in Kafka the
// server answers with the RFC 7628 error challenge {"status":...}, the
// client replies with a lone ^A, and only then does the exchange fail, with
// that JSON as the message.
#pragma once

#include "security/sasl/oauthbearer_unsecured_jws.h"
#include "security/sasl/sasl_server.h"

namespace runnel::security::sasl {

class OAuthBearerSaslServer : public SaslServer {
 public:
  explicit OAuthBearerSaslServer(SaslServerCallbacks callbacks);

  const char* mechanism() const override { return kOAuthBearer; }
  SaslStep evaluate_response(std::span<const uint8_t> response) override;
  std::string authorization_id() const override { return token_ ? token_->principal_name : std::string(); }
  std::optional<int64_t> credential_expiration_ms() const override;

 private:
  SaslStep fail(std::string reason);

  SaslServerCallbacks callbacks_;
  std::optional<OAuthBearerUnsecuredValidatorOptions> options_;
  std::string options_error_;
  std::optional<std::string> error_challenge_;  // sent, awaiting the client's ^A
  std::optional<OAuthBearerToken> token_;
  bool done_ = false;
};

}  // namespace runnel::security::sasl
