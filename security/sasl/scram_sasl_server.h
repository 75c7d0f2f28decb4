// Kafka's ScramSaslServer (SCRAM-SHA-256/512, RFC 5802 and 7677): client-first
// -> server-first, client-final -> server-final, credentials from the
// broker's store (SaslServerCallbacks::scram_credential).
#pragma once

#include <functional>

#include "security/sasl/sasl_server.h"
#include "security/sasl/scram_messages.h"

namespace runnel::security::sasl {

class ScramSaslServer : public SaslServer {
 public:
  // `server_nonce` is for tests replaying a published exchange; by default
  // every exchange draws a fresh one from scram_nonce().
  ScramSaslServer(ScramMechanism mechanism, SaslServerCallbacks callbacks,
                  std::function<std::string()> server_nonce = scram_nonce);

  const char* mechanism() const override;
  SaslStep evaluate_response(std::span<const uint8_t> response) override;
  std::string authorization_id() const override { return authorization_id_; }

 private:
  enum class State { receive_client_first, receive_client_final, complete, failed };

  SaslStep client_first(std::string_view message);
  SaslStep client_final(std::string_view message);
  // Kafka's SaslException: the client is told only the generic message.
  SaslStep fail(std::string reason);
  // Kafka's SaslAuthenticationException: the client is told `message`.
  SaslStep fail_visibly(std::string message);

  ScramMechanism mechanism_;
  SaslServerCallbacks callbacks_;
  std::function<std::string()> server_nonce_;
  State state_ = State::receive_client_first;
  ScramClientFirstMessage client_first_;
  ScramServerFirstMessage server_first_;
  std::string server_first_text_;
  ScramCredential credential_;
  std::string authorization_id_;
};

}  // namespace runnel::security::sasl
