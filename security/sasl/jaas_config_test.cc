#include "security/sasl/jaas_config.h"

#include <catch2/catch.hpp>

using namespace runnel::security::sasl;

TEST_CASE("JAAS config parses Kafka's sample lines", "[sasl]") {
  auto plain = parse_jaas_config(
      "org.apache.kafka.common.security.plain.PlainLoginModule required \n"
      "    username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" user_alice=\"alice-secret\";");
  REQUIRE(plain.size() == 1);
  REQUIRE(plain[0].login_module == kPlainLoginModule);
  REQUIRE(plain[0].control_flag == "required");
  REQUIRE(plain[0].options == std::map<std::string, std::string>{{"username", "admin"},
                                                                 {"password", "admin-secret"},
                                                                 {"user_admin", "admin-secret"},
                                                                 {"user_alice", "alice-secret"}});
  auto scram = parse_jaas_config(
      "org.apache.kafka.common.security.scram.ScramLoginModule required username=alice password='alice-secret';");
  REQUIRE(scram[0].login_module == kScramLoginModule);
  REQUIRE(scram[0].options.at("username") == "alice");
  REQUIRE(scram[0].options.at("password") == "alice-secret");
  auto oauth = parse_jaas_config(
      "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule Required "
      "unsecuredLoginStringClaim_sub=\"thePrincipalName\" unsecuredValidatorAllowableClockSkewMs=\"3000\";");
  REQUIRE(oauth[0].control_flag == "required");
  REQUIRE(oauth[0].options.at("unsecuredLoginStringClaim_sub") == "thePrincipalName");
}

TEST_CASE("JAAS config reads several entries escapes and comments", "[sasl]") {
  auto entries = parse_jaas_config(
      "a.B optional k=\"say \\\"hi\\\"\\n\\\\ \\101\"; /* between */ c.D sufficient; // the rest\n"
      "e.F requisite x=\"\"   ;");
  REQUIRE(entries.size() == 3);
  REQUIRE(entries[0].control_flag == "optional");
  REQUIRE(entries[0].options.at("k") == "say \"hi\"\n\\ A");
  REQUIRE(entries[1].login_module == "c.D");
  REQUIRE(entries[1].options.empty());
  REQUIRE(entries[2].control_flag == "requisite");
  REQUIRE(entries[2].options.at("x").empty());
}

TEST_CASE("JAAS config errors carry Kafka's messages", "[sasl]") {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      parse_jaas_config(text);
    } catch (const JaasConfigError& e) {
      return e.what();
    }
    return "(parsed)";
  };
  REQUIRE(error_of("") == "Login module not specified in JAAS config");
  REQUIRE(error_of("  // nothing\n /* at all */") == "Login module not specified in JAAS config");
  REQUIRE(error_of("a.B") == "Login module control flag not specified in JAAS config");
  REQUIRE(error_of("a.B mandatory;") == "Invalid login module control flag 'mandatory' in JAAS config");
  REQUIRE(error_of("a.B ;") == "Login module control flag is not available in the JAAS config");
  REQUIRE(error_of("a.B required k=v") == "JAAS config entry not terminated by semi-colon");
  REQUIRE(error_of("a.B required k=v; c.D") == "Login module control flag not specified in JAAS config");
  REQUIRE(error_of("a.B required k;") == "Value not specified for key 'k' in JAAS config");
  REQUIRE(error_of("a.B required k=;") == "Value not specified for key 'k' in JAAS config");
  REQUIRE(error_of("a.B required k=") == "Value not specified for key 'k' in JAAS config");
  REQUIRE(error_of("a.B required k=123;") == "Value not specified for key 'k' in JAAS config");
}
