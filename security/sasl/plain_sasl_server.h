// Kafka's PlainSaslServer (RFC 4616: [authzid] NUL authcid NUL passwd), users
// from the listener's PlainLoginModule options (user_<name>=<password>), as
// Kafka's PlainServerCallbackHandler looks them up.
#pragma once

#include "security/sasl/sasl_server.h"

namespace runnel::security::sasl {

class PlainSaslServer : public SaslServer {
 public:
  explicit PlainSaslServer(std::map<std::string, std::string> jaas_options);

  const char* mechanism() const override { return kPlain; }
  SaslStep evaluate_response(std::span<const uint8_t> response) override;
  std::string authorization_id() const override { return authorization_id_; }

 private:
  bool authenticate(const std::string& username, std::string_view password) const;

  std::map<std::string, std::string> jaas_options_;
  bool done_ = false;
  std::string authorization_id_;
};

}  // namespace runnel::security::sasl
