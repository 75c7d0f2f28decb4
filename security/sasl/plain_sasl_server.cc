#include "security/sasl/plain_sasl_server.h"

#include <openssl/crypto.h>

#include <vector>

#include "security/sasl/sasl_text.h"

namespace runnel::security::sasl {

namespace {

SaslStep failed(std::string message) { return {.error = message, .reason = message}; }

// Kafka's extractTokens: up to four NUL-separated tokens, so that
// "a\0b\0c\0d" counts as 4 and fails rather than folding d into the password.
std::vector<std::string_view> tokens_of(std::string_view response) {
  std::vector<std::string_view> tokens;
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    size_t end = response.find('\0', start);
    if (end == std::string_view::npos) {
      tokens.push_back(response.substr(start));
      break;
    }
    tokens.push_back(response.substr(start, end - start));
    start = end + 1;
  }
  return tokens;
}

}  // namespace

PlainSaslServer::PlainSaslServer(std::map<std::string, std::string> jaas_options)
    : jaas_options_(std::move(jaas_options)) {}

SaslStep PlainSaslServer::evaluate_response(std::span<const uint8_t> response) {
  if (done_) return failed("Authentication failed: PLAIN exchange already completed");
  done_ = true;
  auto tokens = tokens_of(as_text(response));
  if (tokens.size() != 3) {
    // A SaslException in Kafka: the client sees only the generic message.
    return {.error = generic_authentication_failure(kPlain),
            .reason = "Invalid SASL/PLAIN response: expected 3 tokens, got " + std::to_string(tokens.size())};
  }
  std::string username(tokens[1]);
  if (username.empty()) return failed("Authentication failed: username not specified");
  if (tokens[2].empty()) return failed("Authentication failed: password not specified");
  if (!authenticate(username, tokens[2])) return failed("Authentication failed: Invalid username or password");
  if (!tokens[0].empty() && tokens[0] != username)
    return failed("Authentication failed: Client requested an authorization id that is different from username");
  authorization_id_ = std::move(username);
  return {.complete = true};
}

bool PlainSaslServer::authenticate(const std::string& username, std::string_view password) const {
  auto expected = jaas_options_.find("user_" + username);
  // An unknown user costs the same comparison as a known one, against a
  // password nobody can send (the client's own is never empty here).
  const std::string_view stored = expected == jaas_options_.end() ? std::string_view() : expected->second;
  // Compare over the longer length so the time depends on neither password's
  // contents nor which one is shorter; lengths must still match.
  const size_t n = std::max(stored.size(), password.size());
  std::string a(n, '\0'), b(n, '\0');
  std::copy(stored.begin(), stored.end(), a.begin());
  std::copy(password.begin(), password.end(), b.begin());
  bool same = CRYPTO_memcmp(a.data(), b.data(), n) == 0;
  return same && stored.size() == password.size() && expected != jaas_options_.end();
}

}  // namespace runnel::security::sasl
