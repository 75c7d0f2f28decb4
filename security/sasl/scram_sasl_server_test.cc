#include "security/sasl/scram_sasl_server.h"

#include <catch2/catch.hpp>

#include "base/base64.h"
#include "security/sasl/sasl_test_support.h"
#include "security/sasl/scram_sasl_client.h"

using namespace runnel::security::sasl;
using runnel::security::sasl::testing::run_exchange;
using runnel::security::sasl::testing::text;
using runnel::security::sasl::testing::token;

namespace {

ScramCredential credential_for(ScramMechanism m, std::string_view password, std::string_view salt_text,
                               int32_t iterations = 4096) {
  Bytes salt(salt_text.begin(), salt_text.end());
  return scram_credential(m, scram_salted_password(m, password, salt, iterations), salt, iterations);
}

// One user, "user", with `password`, for both mechanisms.
SaslServerCallbacks store_with(std::string password, int32_t iterations = 4096) {
  SaslServerCallbacks c;
  c.scram_credential = [password, iterations](const std::string& user,
                                              ScramMechanism m) -> std::optional<ScramCredential> {
    if (user != "user" && user != "a,b=c") return std::nullopt;
    return credential_for(m, password, "some salt", iterations);
  };
  return c;
}

const std::string kGeneric256 =
    "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256";

}  // namespace

TEST_CASE("SCRAM-SHA-256 server replays RFC 7677's exchange byte for byte", "[sasl]") {
  auto salt = runnel::base64_decode("W22ZaJ0SNY7soEsUEjb6gQ==");
  REQUIRE(salt);
  SaslServerCallbacks c;
  c.scram_credential = [&](const std::string& user, ScramMechanism m) -> std::optional<ScramCredential> {
    if (user != "user" || m != ScramMechanism::sha256) return std::nullopt;
    return credential_for(m, "pencil", *salt);
  };
  ScramSaslServer server(ScramMechanism::sha256, c, [] { return std::string("%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"); });
  auto first = server.evaluate_response(token("n,,n=user,r=rOprNGfwEbeRWgbNEkqO"));
  REQUIRE_FALSE(first.error);
  REQUIRE_FALSE(first.complete);
  REQUIRE(text(first.challenge) == "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096");
  auto final_step = server.evaluate_response(
      token("c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="));
  REQUIRE_FALSE(final_step.error);
  REQUIRE(final_step.complete);
  REQUIRE(text(final_step.challenge) == "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
  REQUIRE(server.authorization_id() == "user");
  REQUIRE_FALSE(server.credential_expiration_ms());
}

TEST_CASE("SCRAM-SHA-256 client replays RFC 7677's exchange byte for byte", "[sasl]") {
  ScramSaslClient client(ScramMechanism::sha256, "user", "pencil", [] { return std::string("rOprNGfwEbeRWgbNEkqO"); });
  REQUIRE(text(client.initial_response()) == "n,,n=user,r=rOprNGfwEbeRWgbNEkqO");
  auto final_message = client.evaluate_challenge(
      token("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
  REQUIRE(final_message);
  REQUIRE(text(*final_message) ==
          "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=");
  REQUIRE_FALSE(client.complete());
  REQUIRE(client.evaluate_challenge(token("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")));
  REQUIRE(client.complete());
}

TEST_CASE("SCRAM client refuses a server signature that is not the RFC's", "[sasl]") {
  ScramSaslClient client(ScramMechanism::sha256, "user", "pencil", [] { return std::string("rOprNGfwEbeRWgbNEkqO"); });
  client.initial_response();
  REQUIRE(client.evaluate_challenge(
      token("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")));
  REQUIRE_FALSE(client.evaluate_challenge(token("v=7rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")));
  REQUIRE_FALSE(client.complete());
}

TEST_CASE("SCRAM client refuses a server nonce not extending its own and too few iterations", "[sasl]") {
  ScramSaslClient a(ScramMechanism::sha256, "user", "pencil", [] { return std::string("abc"); });
  a.initial_response();
  REQUIRE_FALSE(a.evaluate_challenge(token("r=xyzabc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")));
  ScramSaslClient b(ScramMechanism::sha256, "user", "pencil", [] { return std::string("abc"); });
  b.initial_response();
  REQUIRE_FALSE(b.evaluate_challenge(token("r=abcxyz,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095")));
  ScramSaslClient c(ScramMechanism::sha256, "user", "pencil", [] { return std::string("abc"); });
  c.initial_response();
  REQUIRE_FALSE(c.evaluate_challenge(token("e=invalid-proof")));
}

TEST_CASE("SCRAM client and server agree for both mechanisms and escaped names", "[sasl]") {
  for (const char* mechanism : {kScramSha256, kScramSha512}) {
    for (const char* user : {"user", "a,b=c"}) {
      auto server = create_sasl_server(mechanism, store_with("secret"));
      auto client = create_sasl_client(mechanism, user, "secret");
      REQUIRE(server);
      REQUIRE(client);
      auto e = run_exchange(*client, *server);
      INFO(mechanism << " " << user << " " << e.last.reason);
      REQUIRE(e.last.complete);
      REQUIRE(e.client_accepted);
      REQUIRE(server->authorization_id() == user);
      REQUIRE(std::string(server->mechanism()) == mechanism);
    }
  }
}

TEST_CASE("SCRAM server fails a wrong password at the final message with Kafka's generic message", "[sasl]") {
  auto server = create_sasl_server(kScramSha512, store_with("secret"));
  auto client = create_sasl_client(kScramSha512, "user", "not the secret");
  auto e = run_exchange(*client, *server);
  REQUIRE_FALSE(e.last.complete);
  REQUIRE(e.last.error ==
          "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512");
  REQUIRE(e.last.reason == "Invalid client credentials");
}

TEST_CASE("SCRAM server fails an unknown user at the first message", "[sasl]") {
  auto server = create_sasl_server(kScramSha256, store_with("secret"));
  auto step = server->evaluate_response(token("n,,n=nobody,r=abc"));
  REQUIRE(step.error == kGeneric256);
  REQUIRE(step.reason == "Authentication failed: Invalid user credentials");
  REQUIRE(step.challenge.empty());
}

TEST_CASE("SCRAM server says so when the authorization id is not the user", "[sasl]") {
  auto server = create_sasl_server(kScramSha256, store_with("secret"));
  auto step = server->evaluate_response(token("n,a=admin,n=user,r=abc"));
  REQUIRE(step.error == "Authentication failed: Client requested an authorization id that is different from username");
  auto same = create_sasl_server(kScramSha256, store_with("secret"));
  REQUIRE_FALSE(same->evaluate_response(token("n,a=user,n=user,r=abc")).error);
}

TEST_CASE("SCRAM server refuses credentials below the minimum iterations", "[sasl]") {
  auto server = create_sasl_server(kScramSha256, store_with("secret", 4095));
  auto step = server->evaluate_response(token("n,,n=user,r=abc"));
  REQUIRE(step.error == kGeneric256);
  REQUIRE(step.reason == "Iterations 4095 is less than the minimum 4096 for SCRAM-SHA-256");
}

TEST_CASE("SCRAM server refuses delegation tokens", "[sasl]") {
  auto server = create_sasl_server(kScramSha256, store_with("secret"));
  auto step = server->evaluate_response(token("n,,n=user,r=abc,tokenauth=true"));
  REQUIRE(step.error == kGeneric256);
  REQUIRE(step.reason == "Token Authentication failed: Invalid tokenId : user");
}

namespace {

// A server past its first message for "user"/"secret", and the final message
// a correct client would send.
struct HalfWay {
  std::unique_ptr<SaslServer> server = create_sasl_server(kScramSha256, store_with("secret"));
  std::unique_ptr<SaslClient> client = create_sasl_client(kScramSha256, "user", "secret");
  std::string final_message;
  HalfWay() {
    auto first = server->evaluate_response(client->initial_response());
    final_message = text(*client->evaluate_challenge(first.challenge));
  }
};

}  // namespace

TEST_CASE("SCRAM server fails a tampered proof", "[sasl]") {
  HalfWay h;
  std::string tampered = h.final_message;
  size_t p = tampered.find(",p=") + 3;
  tampered[p] = tampered[p] == 'A' ? 'B' : 'A';
  auto step = h.server->evaluate_response(token(tampered));
  REQUIRE(step.error == kGeneric256);
  REQUIRE(step.reason == "Invalid client credentials");
}

TEST_CASE("SCRAM server fails a proof of the wrong length", "[sasl]") {
  HalfWay h;
  std::string shorter = h.final_message.substr(0, h.final_message.find(",p=")) + ",p=AAAA";
  REQUIRE(h.server->evaluate_response(token(shorter)).reason == "Invalid client credentials");
}

TEST_CASE("SCRAM server fails a final message with another nonce", "[sasl]") {
  HalfWay h;
  std::string other = h.final_message;
  other.insert(other.find(",p="), "x");
  auto step = h.server->evaluate_response(token(other));
  REQUIRE(step.error == kGeneric256);
  REQUIRE(step.reason == "Invalid client nonce in the final client message.");
}

TEST_CASE("SCRAM server fails a channel binding that is not the gs2 header", "[sasl]") {
  HalfWay h;
  std::string other = "c=eSws" + h.final_message.substr(h.final_message.find(",r="));  // "y,,"
  REQUIRE(h.server->evaluate_response(token(other)).reason == "Invalid channel binding in the final client message.");
}

TEST_CASE("SCRAM server fails every truncation of a correct final message", "[sasl]") {
  HalfWay probe;
  for (size_t n = 0; n < probe.final_message.size(); ++n) {
    HalfWay h;
    auto step = h.server->evaluate_response(token(std::string_view(h.final_message).substr(0, n)));
    INFO(n);
    REQUIRE(step.error == kGeneric256);
    REQUIRE_FALSE(step.complete);
  }
}

TEST_CASE("SCRAM server fails a second message after completion and any message after failure", "[sasl]") {
  HalfWay h;
  REQUIRE(h.server->evaluate_response(token(h.final_message)).complete);
  auto again = h.server->evaluate_response(token(h.final_message));
  REQUIRE(again.error == "Unexpected challenge in Sasl server state COMPLETE");
  auto failed = create_sasl_server(kScramSha256, store_with("secret"));
  REQUIRE(failed->evaluate_response(token("garbage")).error == kGeneric256);
  REQUIRE(failed->evaluate_response(token("n,,n=user,r=abc")).error ==
          "Unexpected challenge in Sasl server state FAILED");
}

TEST_CASE("SCRAM server fails malformed first messages", "[sasl]") {
  const std::string bad[] = {
      "",
      "n",
      "n,,",
      "n,,n=user",
      "n,,n=user,r=",
      "n,,n=,r=abc",
      "p=tls-unique,,n=user,r=abc",  // channel binding, which Kafka does not offer
      "y,,n=user,r=abc",
      "n,,n=us=er,r=abc",            // '=' not as =2C or =3D
      "n,,n=user,r=a b",             // nonce not printable
      "n,,n=user,r=abc,",            // empty extension
      "n,,n=user,r=abc,1=x",         // extension key not ALPHA
      "n,,n=user,r=abc,ext=",
      std::string("n,,n=us\0er,r=abc", 16),
      "n,,n=us\xc3\xa9r,r=abc",      // non-ASCII in a saslname
      "n,,n=user,r=ab\xff",
      "\xff\xfe\x00\x01garbage",
  };
  for (const auto& message : bad) {
    auto server = create_sasl_server(kScramSha256, store_with("secret"));
    auto step = server->evaluate_response(token(message));
    INFO(message);
    REQUIRE(step.error == kGeneric256);
    REQUIRE(step.reason.starts_with("Invalid SCRAM client first message format: "));
  }
}
