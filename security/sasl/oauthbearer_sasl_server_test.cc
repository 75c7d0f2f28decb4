#include "security/sasl/oauthbearer_sasl_server.h"

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "security/sasl/sasl_test_support.h"

using namespace runnel::security::sasl;
using runnel::security::sasl::testing::text;
using runnel::security::sasl::testing::token;

namespace {

constexpr int64_t kNow = 1'700'000'000'000;

std::string base64url(std::string_view s) {
  std::string out = runnel::base64_encode(s);
  while (!out.empty() && out.back() == '=') out.pop_back();
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  return out;
}

std::string jws(std::string_view claims, std::string_view header = R"({"alg":"none"})") {
  return base64url(header) + "." + base64url(claims) + ".";
}

std::string initial_response(std::string_view token_value, std::string_view authzid = "") {
  std::string out = "n,";
  if (!authzid.empty()) out += "a=" + std::string(authzid);
  out += ",\x01" "auth=Bearer " + std::string(token_value) + "\x01\x01";
  return out;
}

SaslServerCallbacks callbacks(std::map<std::string, std::string> options = {}) {
  SaslServerCallbacks c;
  c.oauthbearer_options = std::move(options);
  c.now_ms = [] { return kNow; };
  return c;
}

// {"sub":"alice","iat":now-10s,"exp":now+1h} plus `more`
std::string claims(std::string_view more = "") {
  return R"({"sub":"alice","iat":)" + std::to_string(kNow / 1000 - 10) + R"(,"exp":)" +
         std::to_string(kNow / 1000 + 3600) + std::string(more) + "}";
}

const std::string kGeneric =
    "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER";

// The two-step refusal: the error challenge, then the failure after ^A.
void require_refused(SaslServer& server, std::string_view response, const std::string& challenge) {
  auto first = server.evaluate_response(token(response));
  REQUIRE_FALSE(first.error);
  REQUIRE_FALSE(first.complete);
  REQUIRE(text(first.challenge) == challenge);
  auto second = server.evaluate_response(token("\x01"));
  REQUIRE(second.error == challenge);
}

}  // namespace

TEST_CASE("OAUTHBEARER accepts a valid unsecured token and reports its expiry", "[sasl]") {
  auto server = create_sasl_server(kOAuthBearer, callbacks());
  auto step = server->evaluate_response(token(initial_response(jws(claims()))));
  INFO(step.reason);
  REQUIRE(step.complete);
  REQUIRE_FALSE(step.error);
  REQUIRE(step.challenge.empty());
  REQUIRE(server->authorization_id() == "alice");
  REQUIRE(server->credential_expiration_ms() == kNow + 3600 * 1000);
}

TEST_CASE("OAUTHBEARER takes the principal and scope from the configured claims", "[sasl]") {
  auto server = create_sasl_server(
      kOAuthBearer, callbacks({{"unsecuredValidatorPrincipalClaimName", "client_id"},
                               {"unsecuredValidatorScopeClaimName", "roles"},
                               {"unsecuredValidatorRequiredScope", "read write"}}));
  auto step = server->evaluate_response(
      token(initial_response(jws(claims(R"(,"client_id":"svc","roles":["read","write","x"])")), "svc")));
  INFO(step.reason);
  REQUIRE(step.complete);
  REQUIRE(server->authorization_id() == "svc");
}

TEST_CASE("OAUTHBEARER refuses an expired token in two steps", "[sasl]") {
  auto server = create_sasl_server(kOAuthBearer, callbacks());
  std::string expired = R"({"sub":"alice","exp":)" + std::to_string(kNow / 1000) + "}";
  require_refused(*server, initial_response(jws(expired)), R"({"status":"invalid_token"})");
  REQUIRE_FALSE(server->credential_expiration_ms());
}

TEST_CASE("OAUTHBEARER allows the configured clock skew", "[sasl]") {
  std::string just_expired = R"({"sub":"alice","exp":)" + std::to_string(kNow / 1000 - 1) + "}";
  auto strict = create_sasl_server(kOAuthBearer, callbacks());
  require_refused(*strict, initial_response(jws(just_expired)), R"({"status":"invalid_token"})");
  auto lenient = create_sasl_server(kOAuthBearer, callbacks({{"unsecuredValidatorAllowableClockSkewMs", "2000"}}));
  REQUIRE(lenient->evaluate_response(token(initial_response(jws(just_expired)))).complete);
}

TEST_CASE("OAUTHBEARER refuses a token missing a required scope", "[sasl]") {
  auto server = create_sasl_server(kOAuthBearer, callbacks({{"unsecuredValidatorRequiredScope", "read write"}}));
  require_refused(*server, initial_response(jws(claims(R"(,"scope":"read")"))),
                  R"({"status":"insufficient_scope", "scope":"[read, write]"})");
}

TEST_CASE("OAUTHBEARER refuses a signed token and broken ones", "[sasl]") {
  const std::string tokens[] = {
      jws(claims(), R"({"alg":"HS256"})"),
      jws(claims(), R"({"typ":"JWT"})"),
      jws(claims()) + "c2lnbmF0dXJl",
      jws(R"({"iat":1,"exp":99999999999})"),              // no sub
      jws(R"({"sub":"alice"})"),                          // no exp
      jws(R"({"sub":"alice","exp":"tomorrow"})"),
      jws(claims(R"(,"iat2":0)")).substr(1),              // header no longer base64url JSON
      base64url(R"({"alg":"none"})") + "." + base64url(claims()),  // two parts
      jws(R"({"sub":"alice","iat":)" + std::to_string(kNow / 1000 + 60) + R"(,"exp":)" +
          std::to_string(kNow / 1000 + 120) + "}"),       // issued in the future
  };
  for (const auto& t : tokens) {
    auto server = create_sasl_server(kOAuthBearer, callbacks());
    INFO(t);
    require_refused(*server, initial_response(t), R"({"status":"invalid_token"})");
  }
}

TEST_CASE("OAUTHBEARER refuses an authorization id that is not the principal", "[sasl]") {
  auto server = create_sasl_server(kOAuthBearer, callbacks());
  auto step = server->evaluate_response(token(initial_response(jws(claims()), "bob")));
  REQUIRE(step.error ==
          "Authentication failed: Client requested an authorization id (bob) that is different from the token's "
          "principal name (alice)");
}

TEST_CASE("OAUTHBEARER fails malformed client messages with Kafka's generic message", "[sasl]") {
  std::string good = jws(claims());
  const std::string bad[] = {
      "",
      "\x01",                                               // ^A before any error challenge
      "n,,",
      "n,,\x01\x01",                                        // no auth
      "y,,\x01" "auth=Bearer " + good + "\x01\x01",
      "n,,\x01" "auth=Bearer " + good + "\x01",             // one ^A short
      "n,,\x01" "auth=Basic " + good + "\x01\x01",
      "n,,\x01" "auth=Bearer\x01\x01",
      "n,,\x01" "auth=Bearer " + good + "!\x01\x01",
      "n,,\x01" "auth=Bearer " + good + "\x01" "1x=y\x01\x01",
      std::string("n,,\x01" "auth=Bearer a.b.\x01\0\x01", 23),
      "\xff\xfe\xfd",
  };
  for (const auto& message : bad) {
    auto server = create_sasl_server(kOAuthBearer, callbacks());
    auto step = server->evaluate_response(token(message));
    INFO(message);
    REQUIRE(step.error == kGeneric);
    REQUIRE_FALSE(step.complete);
  }
}

TEST_CASE("OAUTHBEARER ignores extensions and fails a second message after completion", "[sasl]") {
  auto server = create_sasl_server(kOAuthBearer, callbacks());
  std::string response = "n,,\x01" "auth=Bearer " + jws(claims()) + "\x01" "traceId=abc 123\x01\x01";
  REQUIRE(server->evaluate_response(token(response)).complete);
  REQUIRE(server->evaluate_response(token(response)).error == kGeneric);
}

TEST_CASE("OAUTHBEARER with an invalid clock skew option refuses every token", "[sasl]") {
  auto server = create_sasl_server(kOAuthBearer, callbacks({{"unsecuredValidatorAllowableClockSkewMs", "-1"}}));
  auto step = server->evaluate_response(token(initial_response(jws(claims()))));
  REQUIRE(step.error == kGeneric);
  REQUIRE(step.reason.find("internal error") != std::string::npos);
}
