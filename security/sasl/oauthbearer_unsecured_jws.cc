#include "security/sasl/oauthbearer_unsecured_jws.h"

#include <boost/json.hpp>
#include <charconv>
#include <cmath>

#include "base/base64.h"

namespace runnel::security::sasl {

namespace json = boost::json;

namespace {

using Result = std::variant<OAuthBearerToken, OAuthBearerValidationFailure>;

OAuthBearerValidationFailure failure(std::string description) { return {std::move(description), std::nullopt}; }

std::optional<json::object> json_object_of(std::string_view base64url) {
  auto text = base64url_decode(base64url);
  if (!text) return std::nullopt;
  boost::system::error_code ec;
  json::value v = json::parse(*text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  return std::move(v.as_object());
}

// Kafka reads NumericDate claims as seconds, possibly fractional, rounding
// to the millisecond.
std::optional<int64_t> time_claim_ms(const json::value& v) {
  double seconds;
  if (v.is_int64()) seconds = static_cast<double>(v.as_int64());
  else if (v.is_uint64()) seconds = static_cast<double>(v.as_uint64());
  else if (v.is_double()) seconds = v.as_double();
  else return std::nullopt;
  double ms = std::round(seconds * 1000);
  if (!std::isfinite(ms) || std::abs(ms) > 9.2e18) return std::nullopt;
  return static_cast<int64_t>(ms);
}

std::set<std::string> trimmed_nonempty(std::string_view s, std::set<std::string> into = {}) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  if (b != std::string_view::npos) into.emplace(s.substr(b, e - b + 1));
  return into;
}

// Kafka's scope claim: a single string element or a list of strings.
std::optional<std::set<std::string>> scope_of(const json::object& claims, const std::string& name) {
  auto it = claims.find(name);
  if (it == claims.end()) return std::set<std::string>{};
  if (it->value().is_string()) return trimmed_nonempty(it->value().as_string());
  if (!it->value().is_array()) return std::nullopt;
  std::set<std::string> out;
  for (const auto& element : it->value().as_array()) {
    if (!element.is_string()) return std::nullopt;
    out = trimmed_nonempty(element.as_string(), std::move(out));
  }
  return out;
}

std::string java_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

}  // namespace

std::optional<OAuthBearerUnsecuredValidatorOptions> parse_unsecured_validator_options(
    const std::map<std::string, std::string>& jaas_options, std::string* error) {
  OAuthBearerUnsecuredValidatorOptions o;
  auto get = [&](const char* key) -> const std::string* {
    auto it = jaas_options.find(key);
    return it == jaas_options.end() ? nullptr : &it->second;
  };
  if (auto* v = get("unsecuredValidatorPrincipalClaimName"); v && !v->empty()) o.principal_claim_name = *v;
  if (auto* v = get("unsecuredValidatorScopeClaimName"); v && !v->empty()) o.scope_claim_name = *v;
  if (auto* v = get("unsecuredValidatorRequiredScope")) {
    // Kafka's OAuthBearerScopeUtils.parseScope: space-delimited.
    for (size_t start = 0; start <= v->size();) {
      size_t space = v->find(' ', start);
      std::string element = v->substr(start, space == std::string::npos ? std::string::npos : space - start);
      if (!element.empty()) o.required_scope.push_back(element);
      if (space == std::string::npos) break;
      start = space + 1;
    }
  }
  if (auto* v = get("unsecuredValidatorAllowableClockSkewMs"); v && !v->empty()) {
    auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), o.allowable_clock_skew_ms);
    if (ec != std::errc() || end != v->data() + v->size() || o.allowable_clock_skew_ms < 0) {
      if (error)
        *error = "Allowable clock skew must not be negative or non-numeric: " + *v;
      return std::nullopt;
    }
  }
  return o;
}

Result validate_unsecured_jws(std::string_view compact, const OAuthBearerUnsecuredValidatorOptions& options,
                              int64_t now_ms) {
  size_t first = compact.find('.');
  size_t second = first == std::string_view::npos ? first : compact.find('.', first + 1);
  if (second == std::string_view::npos || compact.find('.', second + 1) != std::string_view::npos)
    return failure("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values");
  auto header = json_object_of(compact.substr(0, first));
  auto claims = json_object_of(compact.substr(first + 1, second - first - 1));
  if (!header || !claims) return failure("Invalid unsecured JWS: the header or the claims set is not a JSON object");
  auto alg = header->find("alg");
  if (alg == header->end() || !alg->value().is_string() || alg->value().as_string() != "none")
    return failure("Unsecured JWS must use 'none' for the Algorithm Header Parameter");
  if (second + 1 != compact.size()) return failure("Unsecured JWS must not contain a digital signature");

  OAuthBearerToken token;
  auto principal = claims->find(options.principal_claim_name);
  if (principal == claims->end() || !principal->value().is_string() || principal->value().as_string().empty())
    return failure("Required claim missing or not a string: " + options.principal_claim_name);
  token.principal_name = std::string(principal->value().as_string());
  auto exp = claims->find("exp");
  std::optional<int64_t> lifetime = exp == claims->end() ? std::nullopt : time_claim_ms(exp->value());
  if (!lifetime) return failure("Required claim missing or not a number: exp");
  token.lifetime_ms = *lifetime;
  if (auto iat = claims->find("iat"); iat != claims->end()) {
    token.start_time_ms = time_claim_ms(iat->value());
    if (!token.start_time_ms) return failure("Claim is not a number: iat");
  }
  auto scope = scope_of(*claims, options.scope_claim_name);
  if (!scope) return failure("Scope claim is neither a string nor a list of strings: " + options.scope_claim_name);
  token.scope = std::move(*scope);

  const int64_t skew = options.allowable_clock_skew_ms;
  if (token.start_time_ms && now_ms + skew < *token.start_time_ms)
    return failure("The Issued At value (" + std::to_string(*token.start_time_ms) +
                   " ms) was after the indicated time (" + std::to_string(now_ms) +
                   " ms) plus allowable clock skew (" + std::to_string(skew) + " ms)");
  if (now_ms - skew >= token.lifetime_ms)
    return failure("The indicated time (" + std::to_string(now_ms) + " ms) minus allowable clock skew (" +
                   std::to_string(skew) + " ms) was on or after the Expiration Time value (" +
                   std::to_string(token.lifetime_ms) + " ms)");
  if (token.start_time_ms && token.lifetime_ms <= *token.start_time_ms)
    return failure("The Expiration Time time (" + std::to_string(token.lifetime_ms) +
                   " ms) was not after the Issued At time (" + std::to_string(*token.start_time_ms) + " ms)");
  for (const auto& required : options.required_scope) {
    if (!token.scope.contains(required))
      return OAuthBearerValidationFailure{"The provided scope was missing a required scope (" + required + ")",
                                          java_list(options.required_scope)};
  }
  return token;
}

}  // namespace runnel::security::sasl
