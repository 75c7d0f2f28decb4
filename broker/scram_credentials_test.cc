// DescribeUserScramCredentials (50), AlterUserScramCredentials (51) and the
// store behind them, against a real in-process broker over loopback
// (broker/testing/broker_fixture.h): what Kafka answers for each request,
// the credential stored (derived here from a known password), and the
// credentials surviving a restart on the same log dir.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "broker/scram_credential_manager.h"
#include "broker/testing/broker_fixture.h"
#include "broker/testing/kafka_client.h"
#include "protocol/error_codes.h"
#include "protocol/messages/50_describe_user_scram_credentials.h"
#include "protocol/messages/51_alter_user_scram_credentials.h"
#include "storage/io.h"

using namespace runnel::broker;
using namespace runnel::broker::testing;
using runnel::security::sasl::ScramCredential;
using runnel::security::sasl::ScramMechanism;
namespace p = runnel::protocol;
namespace sasl = runnel::security::sasl;

namespace {

constexpr int8_t kSha256 = 1;
constexpr int8_t kSha512 = 2;

using Upsertion = p::AlterUserScramCredentialsRequest::ScramCredentialUpsertion;
using Deletion = p::AlterUserScramCredentialsRequest::ScramCredentialDeletion;
using AlterResult = p::AlterUserScramCredentialsResponse::AlterUserScramCredentialsResult;
using DescribeResult = p::DescribeUserScramCredentialsResponse::DescribeUserScramCredentialsResult;

const sasl::Bytes kSalt{'s', 'a', 'l', 't', '-', 'o', 'f', '-', 'a', 'l', 'i', 'c', 'e'};

// What Kafka's admin client sends for a password: the salt and Hi(password, salt, i).
Upsertion upsertion(const std::string& user, int8_t mechanism, int32_t iterations,
                    const std::string& password = "alice-secret") {
  Upsertion u;
  u.name = user;
  u.mechanism = mechanism;
  u.iterations = iterations;
  u.salt = kSalt;
  const auto m = mechanism == kSha512 ? ScramMechanism::sha512 : ScramMechanism::sha256;
  u.salted_password = sasl::scram_salted_password(m, password, kSalt, iterations);
  return u;
}

Deletion deletion(const std::string& user, int8_t mechanism) {
  Deletion d;
  d.name = user;
  d.mechanism = mechanism;
  return d;
}

std::vector<AlterResult> alter(KafkaClient& client, std::vector<Deletion> deletions, std::vector<Upsertion> upsertions) {
  p::AlterUserScramCredentialsRequest req;
  req.deletions = std::move(deletions);
  req.upsertions = std::move(upsertions);
  return client.call<p::AlterUserScramCredentialsApi>(req, 0).results;
}

p::DescribeUserScramCredentialsResponse describe(KafkaClient& client, std::optional<std::vector<std::string>> users) {
  p::DescribeUserScramCredentialsRequest req;
  if (!users) {
    req.users = std::nullopt;
  } else {
    req.users.emplace();
    for (const auto& u : *users) req.users->push_back({u, {}});
  }
  return client.call<p::DescribeUserScramCredentialsApi>(req, 0);
}

void require_ok(const std::vector<AlterResult>& results, const std::string& user) {
  REQUIRE(results.size() == 1);
  CHECK(results[0].user == user);
  CHECK(results[0].error_code == 0);
  CHECK_FALSE(results[0].error_message.has_value());
}

void require_refused(const std::vector<AlterResult>& results, const std::string& user, p::ErrorCode code,
                     const std::string& message) {
  REQUIRE(results.size() == 1);
  CHECK(results[0].user == user);
  CHECK(results[0].error_code == p::code(code));
  CHECK(results[0].error_message == message);
}

// mechanism -> iterations, as Describe lists one user.
std::map<int8_t, int32_t> infos_of(const DescribeResult& r) {
  std::map<int8_t, int32_t> out;
  for (const auto& i : r.credential_infos) out[i.mechanism] = i.iterations;
  return out;
}

std::optional<ScramCredential> stored(BrokerFixture& f, const std::string& user, ScramMechanism m) {
  return f.on_loop([user, m](Broker& b) { return b.scram_credentials().credential(user, m); });
}

}  // namespace

TEST_CASE("AlterUserScramCredentials then DescribeUserScramCredentials lists mechanisms and iterations", "[scram]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  require_ok(alter(client, {}, {upsertion("alice", kSha256, 8192)}), "alice");
  require_ok(alter(client, {}, {upsertion("alice", kSha512, 4096)}), "alice");
  require_ok(alter(client, {}, {upsertion("bob", kSha512, 16384)}), "bob");

  for (auto users : {std::optional<std::vector<std::string>>(), std::optional(std::vector<std::string>{})}) {
    auto all = describe(client, users);
    CHECK(all.error_code == 0);
    REQUIRE(all.results.size() == 2);
    CHECK(all.results[0].user == "alice");
    CHECK(all.results[0].error_code == 0);
    CHECK(infos_of(all.results[0]) == std::map<int8_t, int32_t>{{kSha256, 8192}, {kSha512, 4096}});
    CHECK(all.results[1].user == "bob");
    CHECK(infos_of(all.results[1]) == std::map<int8_t, int32_t>{{kSha512, 16384}});
  }
  auto one = describe(client, std::vector<std::string>{"bob"});
  REQUIRE(one.results.size() == 1);
  CHECK(one.results[0].user == "bob");
  CHECK(infos_of(one.results[0]) == std::map<int8_t, int32_t>{{kSha512, 16384}});
}

TEST_CASE("the stored SCRAM credential is derived from the salted password and holds no password", "[scram]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  require_ok(alter(client, {}, {upsertion("alice", kSha256, 8192)}), "alice");

  const auto salted = sasl::scram_salted_password(ScramMechanism::sha256, "alice-secret", kSalt, 8192);
  const ScramCredential expected = sasl::scram_credential(ScramMechanism::sha256, salted, kSalt, 8192);
  CHECK(stored(f, "alice", ScramMechanism::sha256) == expected);
  CHECK_FALSE(stored(f, "alice", ScramMechanism::sha512).has_value());
  CHECK_FALSE(stored(f, "bob", ScramMechanism::sha256).has_value());
  // A wrong password gives another credential.
  const auto other = sasl::scram_salted_password(ScramMechanism::sha256, "not-alice-secret", kSalt, 8192);
  CHECK(stored(f, "alice", ScramMechanism::sha256) != sasl::scram_credential(ScramMechanism::sha256, other, kSalt, 8192));

  // The single node's file holds Kafka's credential string, not the password.
  auto text = runnel::storage::read_whole_file(f.log_dir() / "runnel-scram-credentials.json");
  REQUIRE(text);
  CHECK(text->find(sasl::to_string(expected)) != std::string::npos);
  CHECK(text->find("alice-secret") == std::string::npos);
}

TEST_CASE("AlterUserScramCredentials refuses what Kafka refuses with its codes and messages", "[scram]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  using E = p::ErrorCode;

  SECTION("an unknown mechanism") {
    for (int8_t m : {int8_t{0}, int8_t{3}, int8_t{-1}}) {
      auto u = upsertion("alice", kSha256, 8192);
      u.mechanism = m;
      require_refused(alter(client, {}, {u}), "alice", E::unsupported_sasl_mechanism, "Unknown SCRAM mechanism");
      require_refused(alter(client, {deletion("alice", m)}, {}), "alice", E::unsupported_sasl_mechanism,
                      "Unknown SCRAM mechanism");
    }
  }
  SECTION("an empty user name") {
    require_refused(alter(client, {}, {upsertion("", kSha256, 8192)}), "", E::unacceptable_credential,
                    "Username must not be empty");
    require_refused(alter(client, {deletion("", kSha256)}, {}), "", E::unacceptable_credential,
                    "Username must not be empty");
  }
  SECTION("iterations outside [4096 16384]") {
    require_refused(alter(client, {}, {upsertion("alice", kSha256, 4095)}), "alice", E::unacceptable_credential,
                    "Too few iterations");
    require_refused(alter(client, {}, {upsertion("alice", kSha512, 16385)}), "alice", E::unacceptable_credential,
                    "Too many iterations");
    require_ok(alter(client, {}, {upsertion("alice", kSha256, 4096)}), "alice");
    require_ok(alter(client, {}, {upsertion("alice", kSha512, 16384)}), "alice");
  }
  SECTION("deleting a credential that is not stored") {
    require_refused(alter(client, {deletion("alice", kSha256)}, {}), "alice", E::resource_not_found,
                    "Attempt to delete a user credential that does not exist");
    require_ok(alter(client, {}, {upsertion("alice", kSha256, 8192)}), "alice");
    require_refused(alter(client, {deletion("alice", kSha512)}, {}), "alice", E::resource_not_found,
                    "Attempt to delete a user credential that does not exist");
  }
  SECTION("a user altered twice in one request, whatever the mechanisms") {
    const std::string twice = "A user credential cannot be altered twice in the same request";
    require_refused(alter(client, {}, {upsertion("alice", kSha256, 8192), upsertion("alice", kSha512, 8192)}), "alice",
                    E::duplicate_resource, twice);
    require_ok(alter(client, {}, {upsertion("alice", kSha256, 8192)}), "alice");
    require_refused(alter(client, {deletion("alice", kSha256)}, {upsertion("alice", kSha512, 8192)}), "alice",
                    E::duplicate_resource, twice);
    require_refused(alter(client, {deletion("alice", kSha256), deletion("alice", kSha256)}, {}), "alice",
                    E::duplicate_resource, twice);
    // Nothing of a refused user was applied.
    CHECK(infos_of(describe(client, std::vector<std::string>{"alice"}).results.at(0)) ==
          std::map<int8_t, int32_t>{{kSha256, 8192}});
  }
  SECTION("each user's result on its own: the others are applied") {
    auto results = alter(client, {}, {upsertion("alice", kSha256, 8192), upsertion("bob", kSha256, 1024)});
    REQUIRE(results.size() == 2);
    CHECK(results[0].user == "alice");
    CHECK(results[0].error_code == 0);
    CHECK(results[1].user == "bob");
    CHECK(results[1].error_code == p::code(E::unacceptable_credential));
    auto all = describe(client, std::nullopt);
    REQUIRE(all.results.size() == 1);
    CHECK(all.results[0].user == "alice");
  }
}

TEST_CASE("DescribeUserScramCredentials answers unknown and repeated users as Kafka does", "[scram]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  require_ok(alter(client, {}, {upsertion("alice", kSha256, 8192)}), "alice");
  auto resp = describe(client, std::vector<std::string>{"nobody", "alice", "alice"});
  CHECK(resp.error_code == 0);
  REQUIRE(resp.results.size() == 2);
  CHECK(resp.results[0].user == "nobody");
  CHECK(resp.results[0].error_code == p::code(p::ErrorCode::resource_not_found));
  CHECK(resp.results[0].error_message == "Attempt to describe a user credential that does not exist: nobody");
  CHECK(resp.results[0].credential_infos.empty());
  CHECK(resp.results[1].user == "alice");
  CHECK(resp.results[1].error_code == p::code(p::ErrorCode::duplicate_resource));
  CHECK(resp.results[1].error_message ==
        "Cannot describe SCRAM credentials for the same user twice in a single request: alice");
  CHECK(resp.results[1].credential_infos.empty());
}

TEST_CASE("deleting SCRAM credentials removes one mechanism then the user", "[scram]") {
  BrokerFixture f;
  KafkaClient client(f.port());
  require_ok(alter(client, {}, {upsertion("alice", kSha256, 8192)}), "alice");
  require_ok(alter(client, {}, {upsertion("alice", kSha512, 8192)}), "alice");
  require_ok(alter(client, {deletion("alice", kSha512)}, {}), "alice");
  CHECK(infos_of(describe(client, std::vector<std::string>{"alice"}).results.at(0)) ==
        std::map<int8_t, int32_t>{{kSha256, 8192}});
  CHECK_FALSE(stored(f, "alice", ScramMechanism::sha512).has_value());
  require_ok(alter(client, {deletion("alice", kSha256)}, {}), "alice");
  CHECK(describe(client, std::nullopt).results.empty());
  auto gone = describe(client, std::vector<std::string>{"alice"});
  REQUIRE(gone.results.size() == 1);
  CHECK(gone.results[0].error_code == p::code(p::ErrorCode::resource_not_found));
  CHECK_FALSE(stored(f, "alice", ScramMechanism::sha256).has_value());
}

TEST_CASE("SCRAM credentials survive a broker restart on the same log dir", "[scram]") {
  runnel::storage::testing::TempDir dir;
  const std::map<std::string, std::string> props{{"log.dirs", dir.path.string()}};
  const auto salted = sasl::scram_salted_password(ScramMechanism::sha512, "alice-secret", kSalt, 4096);
  const ScramCredential expected = sasl::scram_credential(ScramMechanism::sha512, salted, kSalt, 4096);
  {
    BrokerFixture f(props);
    KafkaClient client(f.port());
    require_ok(alter(client, {}, {upsertion("alice", kSha512, 4096)}), "alice");
    require_ok(alter(client, {}, {upsertion("bob", kSha256, 8192)}), "bob");
    require_ok(alter(client, {deletion("bob", kSha256)}, {}), "bob");
  }
  BrokerFixture f(props);
  KafkaClient client(f.port());
  auto all = describe(client, std::nullopt);
  REQUIRE(all.results.size() == 1);
  CHECK(all.results[0].user == "alice");
  CHECK(infos_of(all.results[0]) == std::map<int8_t, int32_t>{{kSha512, 4096}});
  CHECK(stored(f, "alice", ScramMechanism::sha512) == expected);
}

TEST_CASE("the SCRAM APIs need DESCRIBE and ALTER on the cluster", "[scram]") {
  std::map<std::string, std::string> props{
      {"authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer"},
      {"allow.everyone.if.no.acl.found", "false"}};
  SECTION("refused") {
    BrokerFixture f(props);
    KafkaClient client(f.port());
    auto results = alter(client, {deletion("carol", kSha256)}, {upsertion("alice", kSha256, 8192),
                                                                upsertion("bob", kSha256, 8192)});
    REQUIRE(results.size() == 3);
    for (size_t i = 0; i < results.size(); ++i) {
      CHECK(results[i].user == std::vector<std::string>{"alice", "bob", "carol"}[i]);
      CHECK(results[i].error_code == p::code(p::ErrorCode::cluster_authorization_failed));
      CHECK_FALSE(results[i].error_message.has_value());
    }
    CHECK_FALSE(stored(f, "alice", ScramMechanism::sha256).has_value());
    auto resp = describe(client, std::vector<std::string>{"alice", "bob"});
    CHECK(resp.error_code == p::code(p::ErrorCode::cluster_authorization_failed));
    CHECK_FALSE(resp.error_message.has_value());
    REQUIRE(resp.results.size() == 2);
    for (const auto& r : resp.results) {
      CHECK(r.user.empty());
      CHECK(r.error_code == p::code(p::ErrorCode::cluster_authorization_failed));
    }
  }
  SECTION("allowed to a super user") {
    props["super.users"] = "User:ANONYMOUS";
    BrokerFixture f(props);
    KafkaClient client(f.port());
    require_ok(alter(client, {}, {upsertion("alice", kSha256, 8192)}), "alice");
    auto resp = describe(client, std::nullopt);
    CHECK(resp.error_code == 0);
    REQUIRE(resp.results.size() == 1);
  }
}
