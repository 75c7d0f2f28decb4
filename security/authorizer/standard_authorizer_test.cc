// The matching rules of Kafka's StandardAuthorizer, case by case as
// Kafka's documentation (docs/security.html "Authorization and ACLs") and
// StandardAuthorizerTest state them.
#include <catch2/catch.hpp>

#include "security/authorizer/acl_codec.h"
#include "security/authorizer/standard_authorizer.h"

using namespace runnel::security;

namespace {

using O = AclOperation;
using R = ResourceType;
using T = PatternType;
const AclPermissionType kAllow = AclPermissionType::allow;
const AclPermissionType kDeny = AclPermissionType::deny;

AclBinding acl(R type, std::string name, T pattern, std::string principal, O op, AclPermissionType perm,
               std::string host = "*") {
  return AclBinding{type, std::move(name), pattern, std::move(principal), std::move(host), op, perm};
}

// A filter, every field a wildcard unless given.
AclBindingFilter filter(R type, std::optional<std::string> name = {}, T pattern = T::any,
                        std::optional<std::string> principal = {}, std::optional<std::string> host = {},
                        O op = O::any, AclPermissionType permission = AclPermissionType::any) {
  AclBindingFilter f;
  f.resource_type = type;
  f.resource_name = std::move(name);
  f.pattern_type = pattern;
  f.principal = std::move(principal);
  f.host = std::move(host);
  f.operation = op;
  f.permission = permission;
  return f;
}

KafkaPrincipal user(std::string name) { return KafkaPrincipal{"User", std::move(name)}; }

StandardAuthorizer with(std::vector<AclBinding> acls, AuthorizerOptions o = {}) {
  StandardAuthorizer a(std::move(o));
  a.replace(acls, 1);
  return a;
}

const std::string kHost = "127.0.0.1";

}  // namespace

TEST_CASE("no ACLs: allow.everyone.if.no.acl.found decides, default deny", "[authorizer]") {
  REQUIRE_FALSE(with({}).authorize(user("alice"), kHost, O::read, R::topic, "t"));
  REQUIRE(with({}, {{}, true}).authorize(user("alice"), kHost, O::read, R::topic, "t"));
}

TEST_CASE("a resource with ACLs for others denies, even with allow.everyone", "[authorizer]") {
  auto a = with({acl(R::topic, "t", T::literal, "User:bob", O::read, kAllow)}, {{}, true});
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::read, R::topic, "t"));
  REQUIRE(a.authorize(user("bob"), kHost, O::read, R::topic, "t"));
  // Another topic has no ACLs of its own: allow.everyone applies.
  REQUIRE(a.authorize(user("alice"), kHost, O::read, R::topic, "u"));
}

TEST_CASE("LITERAL matches exactly its name and * every name of its type", "[authorizer]") {
  auto a = with({acl(R::topic, "orders", T::literal, "User:alice", O::read, kAllow),
                 acl(R::group, "*", T::literal, "User:alice", O::read, kAllow)});
  REQUIRE(a.authorize(user("alice"), kHost, O::read, R::topic, "orders"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::read, R::topic, "orders2"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::read, R::topic, "order"));
  REQUIRE(a.authorize(user("alice"), kHost, O::read, R::group, "anything"));
  // The GROUP "*" is for groups only.
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::read, R::topic, "other"));
}

TEST_CASE("PREFIXED covers exactly the names starting with its prefix", "[authorizer]") {
  auto a = with({acl(R::topic, "app-", T::prefixed, "User:alice", O::write, kAllow)});
  REQUIRE(a.authorize(user("alice"), kHost, O::write, R::topic, "app-"));
  REQUIRE(a.authorize(user("alice"), kHost, O::write, R::topic, "app-orders"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::write, R::topic, "app"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::write, R::topic, "xapp-orders"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::write, R::topic, "App-orders"));
  // A PREFIXED "*" is a prefix like any other, not a wildcard.
  auto star = with({acl(R::topic, "*", T::prefixed, "User:alice", O::write, kAllow)});
  REQUIRE_FALSE(star.authorize(user("alice"), kHost, O::write, R::topic, "t"));
  REQUIRE(star.authorize(user("alice"), kHost, O::write, R::topic, "*t"));
}

TEST_CASE("User:* matches every principal and host * every host, else the exact host", "[authorizer]") {
  auto a = with({acl(R::topic, "t", T::literal, "User:*", O::read, kAllow),
                 acl(R::topic, "h", T::literal, "User:alice", O::read, kAllow, "10.0.0.1")});
  REQUIRE(a.authorize(user("anyone"), kHost, O::read, R::topic, "t"));
  REQUIRE(a.authorize(KafkaPrincipal{}, kHost, O::read, R::topic, "t"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::read, R::topic, "h"));
  REQUIRE(a.authorize(user("alice"), "10.0.0.1", O::read, R::topic, "h"));
  // Principal types count: Group:alice is not User:alice.
  REQUIRE_FALSE(a.authorize(KafkaPrincipal{"Group", "alice"}, "10.0.0.1", O::read, R::topic, "h"));
}

TEST_CASE("DENY wins over ALLOW, whichever pattern carries it", "[authorizer]") {
  auto a = with({acl(R::topic, "*", T::literal, "User:alice", O::all, kAllow),
                 acl(R::topic, "secret-", T::prefixed, "User:alice", O::read, kDeny),
                 acl(R::topic, "open", T::literal, "User:*", O::write, kDeny)});
  REQUIRE(a.authorize(user("alice"), kHost, O::read, R::topic, "public"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::read, R::topic, "secret-x"));
  REQUIRE(a.authorize(user("alice"), kHost, O::write, R::topic, "secret-x"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::write, R::topic, "open"));
  // DENY implies nothing: DENY READ does not deny DESCRIBE.
  REQUIRE(a.authorize(user("alice"), kHost, O::describe, R::topic, "secret-x"));
  // DENY ALL denies every operation.
  auto all = with({acl(R::group, "g", T::literal, "User:alice", O::read, kAllow),
                   acl(R::group, "g", T::literal, "User:alice", O::all, kDeny)});
  REQUIRE_FALSE(all.authorize(user("alice"), kHost, O::read, R::group, "g"));
  REQUIRE_FALSE(all.authorize(user("alice"), kHost, O::describe, R::group, "g"));
}

TEST_CASE("implied operations: ALL, DESCRIBE from READ/WRITE/DELETE/ALTER, DESCRIBE_CONFIGS from ALTER_CONFIGS",
          "[authorizer]") {
  for (O op : {O::read, O::write, O::delete_, O::alter}) {
    auto a = with({acl(R::topic, "t", T::literal, "User:alice", op, kAllow)});
    REQUIRE(a.authorize(user("alice"), kHost, O::describe, R::topic, "t"));
    REQUIRE(a.authorize(user("alice"), kHost, op, R::topic, "t"));
    REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::describe_configs, R::topic, "t"));
  }
  for (O op : {O::create, O::describe_configs, O::alter_configs, O::cluster_action}) {
    auto a = with({acl(R::topic, "t", T::literal, "User:alice", op, kAllow)});
    REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::describe, R::topic, "t"));
  }
  auto configs = with({acl(R::topic, "t", T::literal, "User:alice", O::alter_configs, kAllow)});
  REQUIRE(configs.authorize(user("alice"), kHost, O::describe_configs, R::topic, "t"));
  REQUIRE_FALSE(configs.authorize(user("alice"), kHost, O::alter, R::topic, "t"));
  auto read = with({acl(R::topic, "t", T::literal, "User:alice", O::read, kAllow)});
  REQUIRE_FALSE(read.authorize(user("alice"), kHost, O::write, R::topic, "t"));
  auto all = with({acl(R::cluster, kClusterName, T::literal, "User:alice", O::all, kAllow)});
  for (O op : {O::create, O::alter, O::describe, O::cluster_action, O::idempotent_write, O::alter_configs})
    REQUIRE(all.authorize(user("alice"), kHost, op, R::cluster, kClusterName));
}

TEST_CASE("super.users are allowed everything, DENY or not", "[authorizer]") {
  REQUIRE(parse_super_users(" User:a ; User:b;;") == std::set<std::string>{"User:a", "User:b"});
  auto a = with({acl(R::topic, "*", T::literal, "User:*", O::all, kDeny)}, {parse_super_users("User:admin"), false});
  REQUIRE(a.authorize(user("admin"), kHost, O::write, R::topic, "t"));
  REQUIRE_FALSE(a.authorize(user("alice"), kHost, O::write, R::topic, "t"));
  REQUIRE(a.authorize_by_resource_type(user("admin"), kHost, O::write, R::topic));
}

TEST_CASE("authorize_by_resource_type: some ALLOW no DENY covers", "[authorizer]") {
  auto principal = user("alice");
  REQUIRE_FALSE(with({}).authorize_by_resource_type(principal, kHost, O::write, R::topic));
  REQUIRE(with({}, {{}, true}).authorize_by_resource_type(principal, kHost, O::write, R::topic));
  auto literal = with({acl(R::topic, "t", T::literal, "User:alice", O::write, kAllow)});
  REQUIRE(literal.authorize_by_resource_type(principal, kHost, O::write, R::topic));
  REQUIRE_FALSE(literal.authorize_by_resource_type(principal, kHost, O::read, R::topic));
  REQUIRE_FALSE(literal.authorize_by_resource_type(user("bob"), kHost, O::write, R::topic));
  auto denied = with({acl(R::topic, "app-x", T::literal, "User:alice", O::write, kAllow),
                      acl(R::topic, "app-", T::prefixed, "User:alice", O::write, kDeny)});
  REQUIRE_FALSE(denied.authorize_by_resource_type(principal, kHost, O::write, R::topic));
  auto wildcard_deny = with({acl(R::topic, "p-", T::prefixed, "User:alice", O::write, kAllow),
                             acl(R::topic, "*", T::literal, "User:*", O::write, kDeny)});
  REQUIRE_FALSE(wildcard_deny.authorize_by_resource_type(principal, kHost, O::write, R::topic));
}

TEST_CASE("filters: null fields and ANY match everything, MATCH finds what applies", "[authorizer]") {
  auto a = with({acl(R::topic, "orders", T::literal, "User:alice", O::read, kAllow),
                 acl(R::topic, "*", T::literal, "User:bob", O::write, kAllow),
                 acl(R::topic, "ord", T::prefixed, "User:carol", O::read, kDeny),
                 acl(R::group, "orders", T::literal, "User:alice", O::read, kAllow)});
  REQUIRE(a.acls(AclBindingFilter{}).size() == 4);
  auto topics = filter(R::topic);
  REQUIRE(a.acls(topics).size() == 3);
  auto any_orders = filter(R::any, "orders");
  REQUIRE(a.acls(any_orders).size() == 2);  // the literal topic and group, not "*" or the prefix
  auto literal_star = filter(R::topic, "*", T::literal);
  REQUIRE(a.acls(literal_star).size() == 1);
  auto match = filter(R::topic, "orders", T::match);
  REQUIRE(a.acls(match).size() == 3);
  auto match_other = filter(R::topic, "xyz", T::match);
  REQUIRE(a.acls(match_other).size() == 1);  // only "*"
  auto prefixed = filter(R::topic, {}, T::prefixed);
  REQUIRE(a.acls(prefixed).size() == 1);
  auto by_entry = filter(R::any, {}, T::any, "User:alice", "*", O::read, kAllow);
  REQUIRE(a.acls(by_entry).size() == 2);
  auto denies = filter(R::any, {}, T::any, {}, {}, O::any, kDeny);
  REQUIRE(a.acls(denies).size() == 1);
  auto other_host = filter(R::any, {}, T::any, {}, "10.0.0.1");
  REQUIRE(a.acls(other_host).empty());
}

TEST_CASE("validation as Kafka's CreateAcls and AclControlManager", "[authorizer]") {
  auto good = acl(R::topic, "t", T::literal, "User:alice", O::read, kAllow);
  REQUIRE_FALSE(invalid_binding(good));
  auto bad = [&](auto change) {
    AclBinding b = good;
    change(b);
    return invalid_binding(b).value_or("");
  };
  REQUIRE(bad([](AclBinding& b) { b.resource_type = R::cluster; }) ==
          "The only valid name for the CLUSTER resource is kafka-cluster");
  REQUIRE(bad([](AclBinding& b) { b.resource_name.clear(); }) == "Invalid empty resource name");
  REQUIRE(bad([](AclBinding& b) { b.resource_type = R::any; }) == "Invalid resourceType ANY");
  REQUIRE(bad([](AclBinding& b) { b.pattern_type = T::match; }) == "Invalid patternType MATCH");
  REQUIRE(bad([](AclBinding& b) { b.operation = O::any; }) == "Invalid operation ANY");
  REQUIRE(bad([](AclBinding& b) { b.permission = AclPermissionType::any; }) == "Invalid permissionType ANY");
  REQUIRE(bad([](AclBinding& b) { b.principal = "alice"; }).starts_with("Could not parse principal from `alice`"));
  REQUIRE(resource_type(99) == R::unknown);
  REQUIRE(acl_operation(-1) == O::unknown);
  REQUIRE(invalid_filter(filter(R::unknown)));
  REQUIRE(invalid_filter(filter(R::any, {}, T::unknown)));
  REQUIRE(invalid_filter(filter(R::any, {}, T::any, {}, {}, O::unknown)));
  REQUIRE_FALSE(invalid_filter(AclBindingFilter{}));
}

TEST_CASE("the stored form round-trips and refuses damage", "[authorizer]") {
  std::vector<AclBinding> acls = {acl(R::topic, "t", T::prefixed, "User:alice", O::read, kDeny, "10.0.0.1"),
                                  acl(R::cluster, kClusterName, T::literal, "User:*", O::idempotent_write, kAllow)};
  auto text = encode_acls(acls);
  auto back = decode_acls(text);
  REQUIRE(back);
  std::sort(acls.begin(), acls.end());
  REQUIRE(*back == acls);
  REQUIRE(text.find("\"IDEMPOTENT_WRITE\"") != std::string::npos);
  REQUIRE_FALSE(decode_acls("not json"));
  REQUIRE_FALSE(decode_acls(R"({"version":1,"acls":[{"resource_type":"TOPIC"}]})"));
  REQUIRE(decode_acls(R"({"version":1,"acls":[]})")->empty());
}

TEST_CASE("an older revision never replaces a newer one", "[authorizer]") {
  StandardAuthorizer a({});
  a.replace({acl(R::topic, "t", T::literal, "User:a", O::read, kAllow)}, 5);
  a.replace({}, 4);
  REQUIRE(a.acls().size() == 1);
  a.replace({}, 6);
  REQUIRE(a.acls().empty());
}
