// Kafka's ScramSaslClient: the broker's side when it authenticates to
// another broker with SCRAM-SHA-256/512; it checks the server's signature,
// so a server that does not hold the credential cannot pass for one.
#pragma once

#include <functional>

#include "security/sasl/sasl_client.h"
#include "security/sasl/sasl_server.h"
#include "security/sasl/scram_messages.h"

namespace runnel::security::sasl {

class ScramSaslClient : public SaslClient {
 public:
  // `client_nonce` is for tests replaying a published exchange.
  ScramSaslClient(ScramMechanism mechanism, std::string username, std::string password,
                  std::function<std::string()> client_nonce = scram_nonce);

  const char* mechanism() const override;
  Bytes initial_response() override;
  std::optional<Bytes> evaluate_challenge(std::span<const uint8_t> challenge) override;
  bool complete() const override { return state_ == State::complete; }

 private:
  enum class State { send_client_first, receive_server_first, receive_server_final, complete, failed };

  std::optional<Bytes> server_first(std::string_view message);
  std::optional<Bytes> server_final(std::string_view message);
  std::optional<Bytes> fail();

  ScramMechanism mechanism_;
  std::string username_;
  std::string password_;
  std::function<std::string()> client_nonce_;
  State state_ = State::send_client_first;
  std::string nonce_;
  std::string client_first_bare_;
  std::string auth_message_;
  Bytes salted_password_;
};

}  // namespace runnel::security::sasl
