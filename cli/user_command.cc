// `runnel user create|list|delete`: SCRAM credentials through
// AlterUserScramCredentials and DescribeUserScramCredentials (APIs 51, 50),
// what `kafka-configs --entity-type users --alter --add-config
// 'SCRAM-SHA-256=[password=...]'` and `--describe` send. The password is
// salted and hashed here, as Kafka's admin client does: it never crosses
// the wire.
#include <openssl/rand.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/cluster.h"
#include "cli/command.h"
#include "cli/kafka_errors.h"
#include "cli/table.h"
#include "protocol/messages/50_describe_user_scram_credentials.h"
#include "protocol/messages/51_alter_user_scram_credentials.h"
#include "security/sasl/scram_credential.h"

namespace runnel::cli {

namespace json = boost::json;
using namespace protocol;
using security::sasl::ScramMechanism;

namespace {

// Kafka's ScramMechanism.minIterations() and the 16,384 its controller allows at most.
constexpr int32_t kMinIterations = 4096;
constexpr int32_t kMaxIterations = 16384;

constexpr OptionSpec kPassword{0, "password", "PASSWORD", "the password (default: one line read from stdin)"};
constexpr OptionSpec kMechanism{'m', "mechanism", "MECHANISM",
                                "SCRAM-SHA-256 or SCRAM-SHA-512 (create: default SCRAM-SHA-256, repeatable; "
                                "delete: default every one the user has)"};
constexpr OptionSpec kIterations{0, "iterations", "N", "PBKDF2 iterations (default 4096, at most 16384)"};
constexpr OptionSpec kOutputOption{'o', "output", "text|json", "output format (default text)"};

ScramMechanism mechanism_named(const std::string& name) {
  auto m = security::sasl::scram_mechanism_from_name(name);
  if (m == ScramMechanism::unknown) throw UsageError("unknown mechanism '" + name + "': SCRAM-SHA-256 or SCRAM-SHA-512");
  return m;
}

std::vector<ScramMechanism> mechanisms_of(const ParsedArgs& args) {
  std::vector<ScramMechanism> out;
  for (const auto& m : args.all("mechanism")) out.push_back(mechanism_named(m));
  return out;
}

std::string password_of(const ParsedArgs& args) {
  if (args.has("password")) return args.get("password");
  if (isatty(STDIN_FILENO)) std::fputs("password: ", stderr);
  std::string line;
  if (!std::getline(std::cin, line) || line.empty()) throw UsageError("no password: --password or a line on stdin");
  return line;
}

// Kafka's controller refuses two changes of one user in one request
// (DUPLICATE_RESOURCE): one request per change.
void alter(Cluster& cluster, const AlterUserScramCredentialsRequest& req, const std::string& what) {
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.controller();
    return conn.call<AlterUserScramCredentialsApi>(req, conn.version<AlterUserScramCredentialsApi>());
  });
  for (const auto& r : resp.results) check(r.error_code, what + " " + r.user, r.error_message.value_or(""));
}

DescribeUserScramCredentialsResponse describe(Cluster& cluster, const std::vector<std::string>& users) {
  DescribeUserScramCredentialsRequest req;
  if (users.empty()) {
    req.users = std::nullopt;  // every user
  } else {
    req.users.emplace();
    for (const auto& u : users) req.users->push_back({u, {}});
  }
  auto resp = cluster.with_retries([&] {
    auto& conn = cluster.any();
    return conn.call<DescribeUserScramCredentialsApi>(req, conn.version<DescribeUserScramCredentialsApi>());
  });
  check(resp.error_code, "DescribeUserScramCredentials", resp.error_message.value_or(""));
  return resp;
}

int create(const std::vector<std::string>& argv) {
  const char* usage = "runnel user create NAME [--password P] [-m SCRAM-SHA-256|SCRAM-SHA-512 ...] [--iterations N]";
  auto args = parse_command({kPassword, kMechanism, kIterations}, argv, usage,
                            "Creates a SCRAM user, or sets the password of one that exists.");
  std::string user = one_positional(args, "user name", usage);
  auto mechanisms = mechanisms_of(args);
  if (mechanisms.empty()) mechanisms.push_back(ScramMechanism::sha256);
  int64_t iterations = args.get_int("iterations").value_or(kMinIterations);
  if (iterations < kMinIterations || iterations > kMaxIterations)
    throw UsageError("--iterations " + std::to_string(iterations) + ": between 4096 and 16384");
  std::string password = password_of(args);
  Cluster cluster(ClientConfig::from(args));
  for (ScramMechanism m : mechanisms) {
    AlterUserScramCredentialsRequest::ScramCredentialUpsertion up;
    up.name = user;
    up.mechanism = static_cast<int8_t>(m);
    up.iterations = static_cast<int32_t>(iterations);
    up.salt.resize(32);
    if (RAND_bytes(up.salt.data(), static_cast<int>(up.salt.size())) != 1) throw std::runtime_error("RAND_bytes failed");
    up.salted_password = security::sasl::scram_salted_password(m, password, up.salt, up.iterations);
    AlterUserScramCredentialsRequest req;
    req.upsertions.push_back(std::move(up));
    alter(cluster, req, "setting the credential of");
    std::printf("user %s: %s credential set (%lld iterations)\n", user.c_str(),
                std::string(security::sasl::scram_mechanism_name(m)).c_str(), static_cast<long long>(iterations));
  }
  return kExitOk;
}

int list(const std::vector<std::string>& argv) {
  auto args = parse_command({kOutputOption}, argv, "runnel user list [NAME ...] [-o json]",
                            "Lists SCRAM users and their mechanisms (every user, or those named).");
  bool as_json = wants_json(args.get("output"));
  Cluster cluster(ClientConfig::from(args));
  auto resp = describe(cluster, args.positionals());
  Table table({"USER", "MECHANISM", "ITERATIONS"});
  json::array out;
  for (const auto& r : resp.results) {
    check(r.error_code, "describing user " + r.user, r.error_message.value_or(""));
    json::array creds;
    for (const auto& c : r.credential_infos) {
      std::string name(security::sasl::scram_mechanism_name(static_cast<ScramMechanism>(c.mechanism)));
      table.add({r.user, name, std::to_string(c.iterations)});
      creds.push_back(json::object{{"mechanism", name}, {"iterations", c.iterations}});
    }
    out.push_back(json::object{{"user", r.user}, {"credentials", creds}});
  }
  if (as_json)
    print_json(out);
  else
    std::fputs(table.render().c_str(), stdout);
  return kExitOk;
}

int remove(const std::vector<std::string>& argv) {
  const char* usage = "runnel user delete NAME [-m SCRAM-SHA-256|SCRAM-SHA-512 ...]";
  auto args = parse_command({kMechanism}, argv, usage,
                            "Deletes a SCRAM user's credentials: those of the mechanisms named, else all it has.");
  std::string user = one_positional(args, "user name", usage);
  Cluster cluster(ClientConfig::from(args));
  auto mechanisms = mechanisms_of(args);
  if (mechanisms.empty()) {
    auto resp = describe(cluster, {user});
    for (const auto& r : resp.results) {
      check(r.error_code, "user " + r.user, r.error_message.value_or(""));
      for (const auto& c : r.credential_infos) mechanisms.push_back(static_cast<ScramMechanism>(c.mechanism));
    }
  }
  for (ScramMechanism m : mechanisms) {
    AlterUserScramCredentialsRequest req;
    req.deletions.push_back({user, static_cast<int8_t>(m), {}});
    alter(cluster, req, "deleting the credential of");
    std::printf("user %s: %s credential deleted\n", user.c_str(),
                std::string(security::sasl::scram_mechanism_name(m)).c_str());
  }
  return kExitOk;
}

}  // namespace

int user_command(const std::vector<std::string>& args) {
  static constexpr Verb kVerbs[] = {{"create", create}, {"list", list}, {"delete", remove}};
  return dispatch_verb("user", kVerbs, args);
}

}  // namespace runnel::cli
