// libFuzzer target: arbitrary bytes as the successive SaslAuthenticate
// tokens of one exchange. The first byte picks the side and mechanism; the
// rest is split at 0xFF (a byte no mechanism's tokens need) into tokens fed
// one by one, and each token also goes through the SCRAM parsers directly.
// SCRAM's server answers with a fixed nonce and a fixed credential so that
// seeds can reach the final message and its proof check.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "security/sasl/oauthbearer_sasl_server.h"
#include "security/sasl/plain_sasl_server.h"
#include "security/sasl/sasl_text.h"
#include "security/sasl/scram_messages.h"
#include "security/sasl/scram_sasl_client.h"
#include "security/sasl/scram_sasl_server.h"

using namespace runnel::security::sasl;

namespace {

const ScramCredential& fixed_credential() {
  static const ScramCredential c = [] {
    Bytes salt{'s', 'a', 'l', 't'};
    return scram_credential(ScramMechanism::sha256,
                            scram_salted_password(ScramMechanism::sha256, "pencil", salt, kScramMinIterations), salt,
                            kScramMinIterations);
  }();
  return c;
}

SaslServerCallbacks callbacks() {
  SaslServerCallbacks c;
  c.plain_users = {{"user_alice", "alice-secret"}};
  c.scram_credential = [](const std::string& user, ScramMechanism) -> std::optional<ScramCredential> {
    if (user != "user") return std::nullopt;
    return fixed_credential();
  };
  c.oauthbearer_options = {{"unsecuredValidatorRequiredScope", "read"}};
  c.now_ms = [] { return int64_t{1'700'000'000'000}; };
  return c;
}

std::vector<std::string_view> tokens_of(std::string_view input) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    size_t end = input.find('\xff', start);
    out.push_back(input.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

void parse_all(std::string_view token) {
  (void)parse_scram_client_first(token);
  (void)parse_scram_server_first(token);
  (void)parse_scram_client_final(token);
  (void)parse_scram_server_final(token);
  (void)scram_username(token);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  auto tokens = tokens_of(input);
  for (auto t : tokens) parse_all(t);
  switch (data[0] % 4) {
    case 0: {
      PlainSaslServer server(callbacks().plain_users);
      for (auto t : tokens) server.evaluate_response(as_bytes(t));
      break;
    }
    case 1: {
      ScramSaslServer server(ScramMechanism::sha256, callbacks(), [] { return std::string("fuzz"); });
      for (auto t : tokens) server.evaluate_response(as_bytes(t));
      break;
    }
    case 2: {
      OAuthBearerSaslServer server(callbacks());
      for (auto t : tokens) server.evaluate_response(as_bytes(t));
      break;
    }
    case 3: {
      // The client side: the tokens are the server's challenges.
      ScramSaslClient client(ScramMechanism::sha256, "user", "pencil", [] { return std::string("nonce"); });
      client.initial_response();
      for (auto t : tokens)
        if (!client.evaluate_challenge(as_bytes(t))) break;
      break;
    }
  }
  return 0;
}
