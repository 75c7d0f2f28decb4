#include "broker/admin/admin_auth.h"

#include <catch2/catch.hpp>

#include "base/base64.h"

namespace runnel::broker::admin {
namespace {

namespace sasl = security::sasl;

std::string basic(std::string_view user_password) { return "Basic " + base64_encode(user_password); }

// A user store holding `user`'s credential for `password`, counting lookups.
struct Store {
  std::map<std::pair<std::string, sasl::ScramMechanism>, sasl::ScramCredential> credentials;
  void set(const std::string& user, sasl::ScramMechanism m, std::string_view password, uint8_t salt_byte) {
    std::vector<uint8_t> salt(16, salt_byte);
    auto salted = sasl::scram_salted_password(m, password, salt, 4096);
    credentials[{user, m}] = sasl::scram_credential(m, salted, salt, 4096);
  }
  CredentialLookup lookup() {
    return [this](const std::string& user, sasl::ScramMechanism m) -> std::optional<sasl::ScramCredential> {
      auto it = credentials.find({user, m});
      if (it == credentials.end()) return std::nullopt;
      return it->second;
    };
  }
};

BrokerConfig basic_config() {
  return BrokerConfig::from({{"node.id", "1"}, {"runnel.admin.authentication.method", "BASIC"}});
}

TEST_CASE("Basic authorization headers split into user and password", "[admin][auth]") {
  auto ok = parse_basic_authorization(basic("alice:pa:ss"));
  REQUIRE(ok);
  CHECK(ok->user == "alice");
  CHECK(ok->password == "pa:ss");  // only the first colon separates
  CHECK(parse_basic_authorization("bAsIc " + base64_encode("a:b"))->user == "a");
  CHECK(parse_basic_authorization(basic("a:"))->password.empty());
  CHECK_FALSE(parse_basic_authorization(basic("no colon")));
  CHECK_FALSE(parse_basic_authorization(basic(":no user")));
  CHECK_FALSE(parse_basic_authorization("Basic %%%"));
  CHECK_FALSE(parse_basic_authorization("Bearer " + base64_encode("a:b")));
  CHECK_FALSE(parse_basic_authorization("Basic"));
  CHECK_FALSE(parse_basic_authorization(""));
}

TEST_CASE("Basic credentials are checked against either SCRAM mechanism", "[admin][auth]") {
  Store store;
  store.set("alice", sasl::ScramMechanism::sha512, "alice-secret", 1);
  store.set("bob", sasl::ScramMechanism::sha256, "bob-secret", 2);
  AdminAuthenticator auth(basic_config(), store.lookup());
  CHECK(auth.basic(basic("alice:alice-secret")) == security::KafkaPrincipal{"User", "alice"});
  CHECK(auth.basic(basic("bob:bob-secret")) == security::KafkaPrincipal{"User", "bob"});
  CHECK_FALSE(auth.basic(basic("alice:bob-secret")));
  CHECK_FALSE(auth.basic(basic("carol:alice-secret")));
  // Remembered after a success: a wrong password is still refused.
  CHECK(auth.basic(basic("alice:alice-secret")));
  CHECK_FALSE(auth.basic(basic("alice:alice-secreT")));
}

TEST_CASE("a changed credential forgets the remembered password", "[admin][auth]") {
  Store store;
  store.set("alice", sasl::ScramMechanism::sha512, "old", 1);
  AdminAuthenticator auth(basic_config(), store.lookup());
  REQUIRE(auth.basic(basic("alice:old")));
  store.set("alice", sasl::ScramMechanism::sha512, "new", 3);
  CHECK_FALSE(auth.basic(basic("alice:old")));
  CHECK(auth.basic(basic("alice:new")));
  store.credentials.clear();  // the user deleted
  CHECK_FALSE(auth.basic(basic("alice:new")));
}

TEST_CASE("Basic applies to every path but the skip paths, and only when configured", "[admin][auth]") {
  Store store;
  AdminAuthenticator on(basic_config(), store.lookup());
  CHECK(on.requires_basic("/metrics"));
  CHECK(on.requires_basic("/topics/t"));
  CHECK_FALSE(on.requires_basic("/v1/status/live"));
  CHECK_FALSE(on.requires_basic("/v1/status/ready"));
  AdminAuthenticator off(BrokerConfig::from({{"node.id", "1"}}), store.lookup());
  CHECK_FALSE(off.requires_basic("/topics/t"));
  AdminAuthenticator custom(BrokerConfig::from({{"node.id", "1"},
                                                {"runnel.admin.authentication.method", "BASIC"},
                                                {"runnel.admin.authentication.skip.paths", "/metrics"}}),
                            store.lookup());
  CHECK_FALSE(custom.requires_basic("/metrics"));
  CHECK(custom.requires_basic("/v1/status/ready"));
}

TEST_CASE("a client certificate's subject maps through ssl.principal.mapping.rules", "[admin][auth]") {
  Store store;
  AdminAuthenticator plain(BrokerConfig::from({{"node.id", "1"}}), store.lookup());
  CHECK(plain.certificate("CN=client,O=Runnel") == security::KafkaPrincipal{"User", "CN=client,O=Runnel"});
  AdminAuthenticator mapped(BrokerConfig::from({{"node.id", "1"},
                                                {"listener.name.https.ssl.principal.mapping.rules",
                                                 "RULE:^CN=([^,]*),O=Runnel$/$1/L"}}),
                            store.lookup());
  CHECK(mapped.certificate("CN=Client,O=Runnel") == security::KafkaPrincipal{"User", "client"});
  CHECK_FALSE(mapped.certificate("CN=x,O=Other"));  // no rule applies: refused
}

TEST_CASE("an https admin listener needs a key store", "[admin][auth]") {
  CHECK(admin_ssl_context(BrokerConfig::from({{"node.id", "1"}, {"runnel.admin.listeners", "http://127.0.0.1:0"}})) ==
        nullptr);
  CHECK_THROWS_AS(
      admin_ssl_context(BrokerConfig::from({{"node.id", "1"}, {"runnel.admin.listeners", "https://127.0.0.1:0"}})),
      ConfigError);
}

}  // namespace
}  // namespace runnel::broker::admin
