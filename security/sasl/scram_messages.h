// Kafka's ScramMessages (RFC 5802 section 7): the four SCRAM messages, parsed
// as strictly as Kafka's patterns match them (its SASLNAME, PRINTABLE, VALUE
// and BASE64 classes) and formatted as Kafka writes them. Parsers return
// nullopt for anything Kafka's pattern would not match; they never throw.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "security/sasl/scram_credential.h"

namespace runnel::security::sasl {

// n,[a=<authzid>],[m=<reserved>,]n=<saslname>,r=<nonce>[,<key>=<value>]*
// Only the gs2 header "n" (no channel binding) is accepted, as in Kafka.
struct ScramClientFirstMessage {
  std::string authorization_id;  // empty when not given
  std::string sasl_name;         // still escaped (=2C, =3D)
  std::string nonce;
  std::map<std::string, std::string> extensions;
  std::string gs2_header;  // "n,<a=...>,", what c= must carry back
  std::string bare;        // from n= on: the AuthMessage's first part
};
std::optional<ScramClientFirstMessage> parse_scram_client_first(std::string_view message);
// What the client sends: gs2 header "n,," and the bare part.
std::string format_scram_client_first(std::string_view sasl_name, std::string_view nonce);

// [m=<reserved>,]r=<nonce>,s=<salt>,i=<iterations>[,<key>=<value>]*
struct ScramServerFirstMessage {
  std::string nonce;  // the client's nonce followed by the server's
  Bytes salt;
  int32_t iterations = 0;
};
std::optional<ScramServerFirstMessage> parse_scram_server_first(std::string_view message);
std::string format_scram_server_first(const ScramServerFirstMessage& m);

// c=<channel binding>,r=<nonce>[,<key>=<value>]*,p=<proof>
struct ScramClientFinalMessage {
  std::string channel_binding;  // decoded
  std::string nonce;
  Bytes proof;
  std::string without_proof;  // the AuthMessage's last part
};
std::optional<ScramClientFinalMessage> parse_scram_client_final(std::string_view message);
std::string scram_client_final_without_proof(std::string_view gs2_header, std::string_view nonce);
std::string format_scram_client_final(std::string_view without_proof, std::span<const uint8_t> proof);

// e=<error> or v=<server signature>[,<key>=<value>]*
struct ScramServerFinalMessage {
  std::optional<std::string> error;
  Bytes server_signature;
};
std::optional<ScramServerFinalMessage> parse_scram_server_final(std::string_view message);
std::string format_scram_server_final(std::span<const uint8_t> server_signature);

// Kafka's ScramFormatter.username/saslName: ',' and '=' travel as =2C and
// =3D; nullopt for any other '=' sequence.
std::optional<std::string> scram_username(std::string_view sasl_name);
std::string scram_sasl_name(std::string_view username);

// A fresh nonce: printable, comma-free, from OpenSSL's RAND_bytes (Kafka's
// ScramFormatter.secureRandomString is 130 random bits in base 36).
std::string scram_nonce();

// AuthMessage = client-first-bare "," server-first "," client-final-without-proof
std::string scram_auth_message(std::string_view client_first_bare, std::string_view server_first,
                               std::string_view client_final_without_proof);

}  // namespace runnel::security::sasl
