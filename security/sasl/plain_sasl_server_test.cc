#include "security/sasl/plain_sasl_server.h"

#include <catch2/catch.hpp>

#include "security/sasl/sasl_test_support.h"

using namespace runnel::security::sasl;
using runnel::security::sasl::testing::run_exchange;
using runnel::security::sasl::testing::token;

namespace {

SaslServerCallbacks users() {
  SaslServerCallbacks c;
  c.plain_users = {{"username", "admin"}, {"password", "admin-secret"}, {"user_admin", "admin-secret"},
                   {"user_alice", "alice-secret"}};
  return c;
}

SaslStep plain(std::string_view response) { return create_sasl_server(kPlain, users())->evaluate_response(token(response)); }

using namespace std::string_literals;

}  // namespace

TEST_CASE("PLAIN client and server agree", "[sasl]") {
  auto server = create_sasl_server(kPlain, users());
  auto client = create_sasl_client(kPlain, "alice", "alice-secret");
  auto e = run_exchange(*client, *server);
  REQUIRE(e.last.complete);
  REQUIRE_FALSE(e.last.error);
  REQUIRE(e.last.challenge.empty());
  REQUIRE(client->complete());
  REQUIRE(e.client_accepted);  // the empty success answer is what PLAIN's client expects
  REQUIRE(server->authorization_id() == "alice");
}

TEST_CASE("PLAIN accepts an authorization id equal to the user", "[sasl]") {
  auto server = create_sasl_server(kPlain, users());
  REQUIRE(server->evaluate_response(token("alice\0alice\0alice-secret"s)).complete);
  REQUIRE(server->authorization_id() == "alice");
}

TEST_CASE("PLAIN refuses a wrong password and an unknown user with the same message", "[sasl]") {
  for (auto response : {"\0alice\0admin-secret"s, "\0alice\0alice-secre"s, "\0alice\0alice-secrets"s,
                        "\0bob\0alice-secret"s, "\0username\0admin"s}) {
    auto step = plain(response);
    REQUIRE(step.error == "Authentication failed: Invalid username or password");
    REQUIRE_FALSE(step.complete);
  }
}

TEST_CASE("PLAIN reports a missing username or password", "[sasl]") {
  REQUIRE(plain("\0\0alice-secret"s).error == "Authentication failed: username not specified");
  REQUIRE(plain("\0alice\0"s).error == "Authentication failed: password not specified");
}

TEST_CASE("PLAIN refuses an authorization id that is not the user", "[sasl]") {
  REQUIRE(plain("admin\0alice\0alice-secret"s).error ==
          "Authentication failed: Client requested an authorization id that is different from username");
}

TEST_CASE("PLAIN counts tokens as Kafka does", "[sasl]") {
  const std::string generic =
      "Authentication failed during authentication due to invalid credentials with SASL mechanism PLAIN";
  const std::pair<std::string, int> cases[] = {
      {"", 1}, {"alice", 1}, {"\0alice"s, 2}, {"\0alice\0alice-secret\0"s, 4},
      {"\0alice\0alice-secret\0x\0y"s, 4}, {"\xff\xfe garbage"s, 1}};
  for (const auto& [response, count] : cases) {
    auto step = plain(response);
    REQUIRE(step.error == generic);
    REQUIRE(step.reason == "Invalid SASL/PLAIN response: expected 3 tokens, got " + std::to_string(count));
  }
}

TEST_CASE("PLAIN treats non-UTF-8 bytes as an unknown user", "[sasl]") {
  REQUIRE(plain("\0al\xffice\0alice-secret"s).error == "Authentication failed: Invalid username or password");
}

TEST_CASE("PLAIN fails a second message after completion", "[sasl]") {
  auto server = create_sasl_server(kPlain, users());
  REQUIRE(server->evaluate_response(token("\0alice\0alice-secret"s)).complete);
  auto again = server->evaluate_response(token("\0alice\0alice-secret"s));
  REQUIRE(again.error);
  REQUIRE_FALSE(again.complete);
}

TEST_CASE("SASL factories know Kafka's mechanism names only", "[sasl]") {
  REQUIRE_FALSE(create_sasl_server("GSSAPI", users()));
  REQUIRE_FALSE(create_sasl_server("plain", users()));
  REQUIRE_FALSE(create_sasl_client("OAUTHBEARER", "u", "p"));
  REQUIRE_FALSE(create_sasl_client("SCRAM-SHA-1", "u", "p"));
}
