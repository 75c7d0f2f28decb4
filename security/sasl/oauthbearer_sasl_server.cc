#include "security/sasl/oauthbearer_sasl_server.h"

#include <cctype>
#include <chrono>

#include "security/sasl/sasl_text.h"

namespace runnel::security::sasl {

namespace {

constexpr char kSeparator = '\x01';

// Kafka's VALUE: [\x21-\x7E \t\r\n]+
bool is_value(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s)
    if (!((c >= 0x21 && c <= 0x7E) || c == ' ' || c == '\t' || c == '\r' || c == '\n')) return false;
  return true;
}

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

struct ClientInitialResponse {
  std::string authorization_id;
  std::map<std::string, std::string> pairs;
};

std::optional<ClientInitialResponse> parse_client_initial_response(std::string_view s) {
  if (s.substr(0, 2) != "n,") return std::nullopt;
  s.remove_prefix(2);
  ClientInitialResponse r;
  size_t comma = s.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  if (comma > 0) {
    if (s.substr(0, 2) != "a=" || !is_sasl_name(s.substr(2, comma - 2))) return std::nullopt;
    r.authorization_id = std::string(s.substr(2, comma - 2));
  }
  s.remove_prefix(comma + 1);
  // ^A (<key>=<value>^A)* ^A
  if (s.size() < 2 || s.front() != kSeparator || s.back() != kSeparator) return std::nullopt;
  s = s.substr(1, s.size() - 2);
  while (!s.empty()) {
    size_t end = s.find(kSeparator);
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view pair = s.substr(0, end);
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || !is_alpha(pair.substr(0, eq)) || !is_value(pair.substr(eq + 1)))
      return std::nullopt;
    r.pairs[std::string(pair.substr(0, eq))] = std::string(pair.substr(eq + 1));
    s.remove_prefix(end + 1);
  }
  return r;
}

std::string error_challenge(const OAuthBearerValidationFailure& f) {
  // Kafka's jsonErrorResponse, spacing included.
  if (f.failure_scope) return R"({"status":"insufficient_scope", "scope":")" + *f.failure_scope + "\"}";
  return R"({"status":"invalid_token"})";
}

}  // namespace

OAuthBearerSaslServer::OAuthBearerSaslServer(SaslServerCallbacks callbacks) : callbacks_(std::move(callbacks)) {
  options_ = parse_unsecured_validator_options(callbacks_.oauthbearer_options, &options_error_);
}

std::optional<int64_t> OAuthBearerSaslServer::credential_expiration_ms() const {
  if (!token_) return std::nullopt;
  return token_->lifetime_ms;
}

SaslStep OAuthBearerSaslServer::evaluate_response(std::span<const uint8_t> response) {
  if (done_) return fail("OAUTHBEARER exchange already completed");
  std::string_view message = as_text(response);
  if (message.size() == 1 && message[0] == kSeparator && error_challenge_) {
    done_ = true;
    return {.error = *error_challenge_, .reason = *error_challenge_};
  }
  error_challenge_.reset();
  auto parsed = parse_client_initial_response(message);
  if (!parsed) return fail("Invalid OAUTHBEARER client first message");
  auto auth = parsed->pairs.find("auth");
  if (auth == parsed->pairs.end()) return fail("Invalid OAUTHBEARER client first message: 'auth' not specified");
  // auth=<scheme> <token>: \w+, one or more spaces, [-_.a-zA-Z0-9]+
  std::string_view value = auth->second;
  size_t space = value.find(' ');
  size_t token_start = value.find_first_not_of(' ', space);
  if (space == 0 || space == std::string_view::npos || token_start == std::string_view::npos)
    return fail("Invalid OAUTHBEARER client first message: invalid 'auth' format");
  std::string_view scheme = value.substr(0, space), token = value.substr(token_start);
  for (char c : scheme)
    if (!is_word_char(c)) return fail("Invalid OAUTHBEARER client first message: invalid 'auth' format");
  for (char c : token)
    if (!is_token_char(c)) return fail("Invalid OAUTHBEARER client first message: invalid 'auth' format");
  std::string lower(scheme);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower != "bearer") return fail("Invalid scheme in OAUTHBEARER client first message: " + std::string(scheme));
  if (!options_)
    return fail("Authentication could not be performed due to an internal error on the server: " + options_error_);

  int64_t now = callbacks_.now_ms ? callbacks_.now_ms()
                                  : std::chrono::duration_cast<std::chrono::milliseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count();
  auto result = validate_unsecured_jws(token, *options_, now);
  if (auto* refused = std::get_if<OAuthBearerValidationFailure>(&result)) {
    error_challenge_ = error_challenge(*refused);
    std::string challenge = *error_challenge_;
    return {.challenge = Bytes(challenge.begin(), challenge.end()), .reason = refused->description};
  }
  auto& accepted = std::get<OAuthBearerToken>(result);
  if (!parsed->authorization_id.empty() && parsed->authorization_id != accepted.principal_name) {
    done_ = true;
    std::string message = "Authentication failed: Client requested an authorization id (" +
                          parsed->authorization_id + ") that is different from the token's principal name (" +
                          accepted.principal_name + ")";
    return {.error = message, .reason = message};
  }
  token_ = std::move(accepted);
  done_ = true;
  return {.complete = true};
}

SaslStep OAuthBearerSaslServer::fail(std::string reason) {
  done_ = true;
  return {.error = generic_authentication_failure(kOAuthBearer), .reason = std::move(reason)};
}

}  // namespace runnel::security::sasl
