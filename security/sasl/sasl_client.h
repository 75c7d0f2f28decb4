// The client's side of one SASL exchange, for the connections a broker
// opens to the others (its replica fetchers) over a SASL listener, with
// sasl.mechanism.inter.broker.protocol and the username/password options
// of the listener's JAAS line, as Kafka's brokers authenticate to each other.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>

#include "security/sasl/scram_credential.h"

namespace runnel::security::sasl {

// Who a broker is to the others: sasl.mechanism.inter.broker.protocol and
// the username and password of that mechanism's JAAS line.
struct SaslCredentials {
  std::string mechanism;
  std::string username;
  std::string password;
};

class SaslClient {
 public:
  virtual ~SaslClient() = default;
  virtual const char* mechanism() const = 0;
  // The first token, sent in the first SaslAuthenticate.
  virtual Bytes initial_response() = 0;
  // The server's challenge; the next token to send, or nullopt when the
  // challenge is wrong (bad server signature, malformed): authentication
  // failed. After the last challenge (for PLAIN, the empty answer to its
  // one token) `complete()` is true and the token returned is not sent.
  virtual std::optional<Bytes> evaluate_challenge(std::span<const uint8_t> challenge) = 0;
  virtual bool complete() const = 0;
};

// PLAIN or SCRAM-SHA-256/512 with these credentials; nullptr for another
// mechanism.
std::unique_ptr<SaslClient> create_sasl_client(const std::string& mechanism, const std::string& username,
                                               const std::string& password);

}  // namespace runnel::security::sasl
