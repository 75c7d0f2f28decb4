#include <catch2/catch.hpp>

#include "security/ssl_principal_mapper.h"

using runnel::security::SslPrincipalMapper;

TEST_CASE("DEFAULT keeps the DN as it is", "[security][ssl]") {
  SslPrincipalMapper m;
  REQUIRE(m.name("CN=client,OU=eng,O=Runnel,C=US") == "CN=client,OU=eng,O=Runnel,C=US");
  REQUIRE(SslPrincipalMapper("  DEFAULT  ").name("CN=a") == "CN=a");
}

TEST_CASE("RULE replaces with groups, first rule that applies wins", "[security][ssl]") {
  SslPrincipalMapper m("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, DEFAULT");
  REQUIRE(m.name("CN=kafka1,OU=ServiceUsers,O=Org,C=US") == "kafka1");
  REQUIRE(m.name("CN=alice,OU=People,O=Org,C=US") == "CN=alice,OU=People,O=Org,C=US");
}

TEST_CASE("RULE /L and /U change the case", "[security][ssl]") {
  const std::string dn = "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US";
  REQUIRE(SslPrincipalMapper("RULE:^CN=(.*),OU=(.*),O=(.*),C=(.*)$/$1@$2/L").name(dn) == "duke@javasoft");
  REQUIRE(SslPrincipalMapper("RULE:^CN=(.*),OU=(.*),O=(.*),C=(.*)$/$1@$2/U").name(dn) == "DUKE@JAVASOFT");
  REQUIRE(SslPrincipalMapper("RULE:^CN=([^,]*).*$/$1/").name(dn) == "Duke");
}

TEST_CASE("escapes: a slash in a pattern, literal text in a replacement", "[security][ssl]") {
  REQUIRE(SslPrincipalMapper("RULE:^CN=(.*)\\/x$/$1/").name("CN=a/x") == "a");
  REQUIRE(SslPrincipalMapper("RULE:^CN=(.*)$/user\\$$1/").name("CN=a") == "user$a");
  // A reference past the last group is literal text, as Kafka makes it.
  REQUIRE(SslPrincipalMapper("RULE:^CN=(.*)$/$1@$4/").name("CN=a") == "a@$4");
}

TEST_CASE("no rule applies: nullopt (Kafka's NoMatchingRule)", "[security][ssl]") {
  SslPrincipalMapper m("RULE:^CN=(.*),OU=ServiceUsers$/$1/");
  REQUIRE_FALSE(m.name("CN=alice,OU=People").has_value());
  REQUIRE_FALSE(SslPrincipalMapper("").name("CN=a").has_value());
}

TEST_CASE("invalid rules are refused with Kafka's message", "[security][ssl]") {
  REQUIRE_THROWS_WITH(SslPrincipalMapper("RULE:abc"), Catch::Contains("Invalid rule"));
  REQUIRE_THROWS_WITH(SslPrincipalMapper("DEFAULTx"), Catch::Contains("unmatched substring: `x`"));
  REQUIRE_THROWS_WITH(SslPrincipalMapper("RULE:a/b/Lxyz"), Catch::Contains("unmatched substring: `xyz`"));
  REQUIRE_THROWS_WITH(SslPrincipalMapper("DEFAULT, nonsense"), Catch::Contains("Invalid rule"));
  REQUIRE_THROWS_WITH(SslPrincipalMapper("RULE:(/x/"), Catch::Contains("Invalid rule"));
}
