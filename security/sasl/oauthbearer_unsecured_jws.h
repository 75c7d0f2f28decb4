// Kafka's OAuthBearerUnsecuredJws and the checks its unsecured validator
// (OAuthBearerUnsecuredValidatorCallbackHandler, OAuthBearerValidationUtils)
// makes: an RFC 7515 compact serialization with header {"alg":"none"}, a
// claims set, and an empty signature. For development only, as in Kafka.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace runnel::security::sasl {

struct OAuthBearerToken {
  std::string principal_name;
  std::set<std::string> scope;
  int64_t lifetime_ms = 0;                  // "exp"
  std::optional<int64_t> start_time_ms;     // "iat"
};

// Why a token was refused: what Kafka's validator puts in the error
// challenge ({"status":..., "scope":...}) and its description for the log.
struct OAuthBearerValidationFailure {
  std::string description;
  std::optional<std::string> failure_scope;  // set: insufficient_scope
};

// The unsecuredValidator* JAAS options.
struct OAuthBearerUnsecuredValidatorOptions {
  std::string principal_claim_name = "sub";
  std::string scope_claim_name = "scope";
  std::vector<std::string> required_scope;
  int64_t allowable_clock_skew_ms = 0;
};

// nullopt (and *error) when an option is not what Kafka accepts.
std::optional<OAuthBearerUnsecuredValidatorOptions> parse_unsecured_validator_options(
    const std::map<std::string, std::string>& jaas_options, std::string* error);

std::variant<OAuthBearerToken, OAuthBearerValidationFailure> validate_unsecured_jws(
    std::string_view compact_serialization, const OAuthBearerUnsecuredValidatorOptions& options, int64_t now_ms);

}  // namespace runnel::security::sasl
