#include "security/sasl/scram_sasl_client.h"

#include <openssl/crypto.h>

#include "security/sasl/sasl_text.h"

namespace runnel::security::sasl {

namespace {

constexpr std::string_view kGs2Header = "n,,";

}  // namespace

ScramSaslClient::ScramSaslClient(ScramMechanism mechanism, std::string username, std::string password,
                                 std::function<std::string()> client_nonce)
    : mechanism_(mechanism),
      username_(std::move(username)),
      password_(std::move(password)),
      client_nonce_(std::move(client_nonce)) {}

const char* ScramSaslClient::mechanism() const {
  return mechanism_ == ScramMechanism::sha512 ? kScramSha512 : kScramSha256;
}

Bytes ScramSaslClient::initial_response() {
  nonce_ = client_nonce_();
  std::string first = format_scram_client_first(scram_sasl_name(username_), nonce_);
  client_first_bare_ = first.substr(kGs2Header.size());
  state_ = State::receive_server_first;
  return to_bytes(first);
}

std::optional<Bytes> ScramSaslClient::evaluate_challenge(std::span<const uint8_t> challenge) {
  std::string_view message = as_text(challenge);
  switch (state_) {
    case State::receive_server_first: return server_first(message);
    case State::receive_server_final: return server_final(message);
    default: return fail();
  }
}

std::optional<Bytes> ScramSaslClient::server_first(std::string_view message) {
  auto parsed = parse_scram_server_first(message);
  // Kafka's client: the server's nonce must extend ours, and a server may
  // not talk it down below the mechanism's minimum iterations. The upper
  // bound (what AlterUserScramCredentials accepts) is Runnel's: it keeps a
  // rogue peer from making this broker spend minutes in PBKDF2.
  if (!parsed || parsed->nonce.size() <= nonce_.size() || parsed->nonce.compare(0, nonce_.size(), nonce_) != 0 ||
      parsed->iterations < kScramMinIterations || parsed->iterations > kScramMaxIterations)
    return fail();
  salted_password_ = scram_salted_password(mechanism_, password_, parsed->salt, parsed->iterations);
  std::string without_proof = scram_client_final_without_proof(kGs2Header, parsed->nonce);
  auth_message_ = scram_auth_message(client_first_bare_, message, without_proof);
  Bytes client_key = scram_hmac(mechanism_, salted_password_, as_bytes("Client Key"));
  Bytes stored_key = scram_hash(mechanism_, client_key);
  Bytes client_signature = scram_hmac(mechanism_, stored_key, as_bytes(auth_message_));
  Bytes proof(client_key.size());
  for (size_t i = 0; i < proof.size(); ++i) proof[i] = client_key[i] ^ client_signature[i];
  state_ = State::receive_server_final;
  return to_bytes(format_scram_client_final(without_proof, proof));
}

std::optional<Bytes> ScramSaslClient::server_final(std::string_view message) {
  auto parsed = parse_scram_server_final(message);
  if (!parsed || parsed->error) return fail();
  Bytes server_key = scram_hmac(mechanism_, salted_password_, as_bytes("Server Key"));
  Bytes expected = scram_hmac(mechanism_, server_key, as_bytes(auth_message_));
  if (parsed->server_signature.size() != expected.size() ||
      CRYPTO_memcmp(parsed->server_signature.data(), expected.data(), expected.size()) != 0)
    return fail();
  salted_password_.clear();
  state_ = State::complete;
  return Bytes{};
}

std::optional<Bytes> ScramSaslClient::fail() {
  state_ = State::failed;
  salted_password_.clear();
  return std::nullopt;
}

}  // namespace runnel::security::sasl
