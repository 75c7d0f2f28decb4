#include "security/sasl/scram_sasl_server.h"

#include <openssl/crypto.h>

#include "security/sasl/sasl_text.h"

namespace runnel::security::sasl {

namespace {

}  // namespace

ScramSaslServer::ScramSaslServer(ScramMechanism mechanism, SaslServerCallbacks callbacks,
                                 std::function<std::string()> server_nonce)
    : mechanism_(mechanism), callbacks_(std::move(callbacks)), server_nonce_(std::move(server_nonce)) {}

const char* ScramSaslServer::mechanism() const {
  return mechanism_ == ScramMechanism::sha512 ? kScramSha512 : kScramSha256;
}

SaslStep ScramSaslServer::evaluate_response(std::span<const uint8_t> response) {
  std::string_view message = as_text(response);
  switch (state_) {
    case State::receive_client_first: return client_first(message);
    case State::receive_client_final: return client_final(message);
    case State::complete:
      return fail_visibly("Unexpected challenge in Sasl server state COMPLETE");
    case State::failed:
      return fail_visibly("Unexpected challenge in Sasl server state FAILED");
  }
  return fail("unreachable");
}

SaslStep ScramSaslServer::client_first(std::string_view message) {
  auto parsed = parse_scram_client_first(message);
  if (!parsed) return fail("Invalid SCRAM client first message format: " + std::string(message));
  client_first_ = std::move(*parsed);
  auto username = scram_username(client_first_.sasl_name);
  if (!username) return fail("Authentication failed: Credentials could not be obtained");
  // Delegation tokens (tokenauth=true) authenticate against the token
  // store, which Runnel does not have: every token id is unknown, as Kafka
  // answers for one it does not hold.
  auto tokenauth = client_first_.extensions.find("tokenauth");
  if (tokenauth != client_first_.extensions.end() && tokenauth->second == "true")
    return fail("Token Authentication failed: Invalid tokenId : " + *username);
  std::optional<ScramCredential> credential;
  if (callbacks_.scram_credential) credential = callbacks_.scram_credential(*username, mechanism_);
  if (!credential) return fail("Authentication failed: Invalid user credentials");
  if (!client_first_.authorization_id.empty() && client_first_.authorization_id != *username)
    return fail_visibly("Authentication failed: Client requested an authorization id that is different from username");
  if (credential->iterations < kScramMinIterations)
    return fail("Iterations " + std::to_string(credential->iterations) + " is less than the minimum " +
                std::to_string(kScramMinIterations) + " for " + mechanism());
  credential_ = std::move(*credential);
  authorization_id_ = std::move(*username);
  server_first_ = {client_first_.nonce + server_nonce_(), credential_.salt, credential_.iterations};
  server_first_text_ = format_scram_server_first(server_first_);
  state_ = State::receive_client_final;
  return {.challenge = to_bytes(server_first_text_)};
}

SaslStep ScramSaslServer::client_final(std::string_view message) {
  auto parsed = parse_scram_client_final(message);
  if (!parsed) return fail("Invalid SCRAM client final message format: " + std::string(message));
  // endsWith, Kafka 3.x's check, not Kafka 4.1's equality: librdkafka
  // below 2.6.1 (Debian 12's 2.0.2) sends its client nonce again in front
  // of the server's combined one, and Kafka 4.1 refuses it (README, "Where
  // Runnel differs").
  if (!parsed->nonce.ends_with(server_first_.nonce)) return fail("Invalid client nonce in the final client message.");
  // Kafka leaves this to the proof (c= is part of the AuthMessage); checking
  // it first says why such an exchange fails.
  if (parsed->channel_binding != client_first_.gs2_header)
    return fail("Invalid channel binding in the final client message.");
  std::string auth_message = scram_auth_message(client_first_.bare, server_first_text_, parsed->without_proof);
  Bytes client_signature = scram_hmac(mechanism_, credential_.stored_key, as_bytes(auth_message));
  if (parsed->proof.size() != client_signature.size()) return fail("Invalid client credentials");
  // ClientKey = ClientProof XOR ClientSignature; StoredKey = H(ClientKey).
  Bytes client_key(client_signature.size());
  for (size_t i = 0; i < client_key.size(); ++i) client_key[i] = parsed->proof[i] ^ client_signature[i];
  Bytes computed_stored_key = scram_hash(mechanism_, client_key);
  if (computed_stored_key.size() != credential_.stored_key.size() ||
      CRYPTO_memcmp(computed_stored_key.data(), credential_.stored_key.data(), computed_stored_key.size()) != 0)
    return fail("Invalid client credentials");
  Bytes server_signature = scram_hmac(mechanism_, credential_.server_key, as_bytes(auth_message));
  credential_ = {};
  state_ = State::complete;
  return {.challenge = to_bytes(format_scram_server_final(server_signature)), .complete = true};
}

SaslStep ScramSaslServer::fail(std::string reason) {
  state_ = State::failed;
  credential_ = {};
  return {.error = generic_authentication_failure(mechanism()), .reason = std::move(reason)};
}

SaslStep ScramSaslServer::fail_visibly(std::string message) {
  state_ = State::failed;
  credential_ = {};
  return {.error = message, .reason = message};
}

}  // namespace runnel::security::sasl
