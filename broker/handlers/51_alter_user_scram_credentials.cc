// AlterUserScramCredentials (key 51): removes and sets users' SCRAM
// credentials, as Kafka's ControllerApis and ScramControlManager.
// alterCredentials answer. ALTER on the cluster is required (every user
// named, sorted, CLUSTER_AUTHORIZATION_FAILED, as AlterUserScramCredentials
// Request.getErrorResponse answers). Then, per user:
//   - a second alteration of a user (either kind) is DUPLICATE_RESOURCE,
//     and that user's first one is dropped too;
//   - an empty name is UNACCEPTABLE_CREDENTIAL, an unknown mechanism
//     UNSUPPORTED_SASL_MECHANISM, iterations outside [4096, 16384]
//     UNACCEPTABLE_CREDENTIAL, deleting what is not stored RESOURCE_NOT_FOUND;
//   - the rest are applied together. An upsertion carries the salt and the
//     salted password; StoredKey and ServerKey are derived from them here,
//     and only those are kept.
// kafka-configs sends both mechanisms of one --add-config in one request,
// which Kafka's controller answers DUPLICATE_RESOURCE for that user: so does this.
#include <algorithm>
#include <map>
#include <memory>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/scram_credential_manager.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using security::sasl::ScramMechanism;
using Request = p::AlterUserScramCredentialsRequest;
using UserResult = p::AlterUserScramCredentialsResponse::AlterUserScramCredentialsResult;

struct Refusal {
  p::ErrorCode code;
  std::string message;
};

// Kafka's ScramMechanism.fromType: a type that is neither SHA-256 nor SHA-512 is UNKNOWN.
ScramMechanism mechanism_of(int8_t type) {
  if (type == static_cast<int8_t>(ScramMechanism::sha256)) return ScramMechanism::sha256;
  if (type == static_cast<int8_t>(ScramMechanism::sha512)) return ScramMechanism::sha512;
  return ScramMechanism::unknown;
}

std::optional<Refusal> invalid_user_or_mechanism(const std::string& user, int8_t mechanism) {
  if (user.empty()) return Refusal{p::ErrorCode::unacceptable_credential, "Username must not be empty"};
  if (mechanism_of(mechanism) == ScramMechanism::unknown)
    return Refusal{p::ErrorCode::unsupported_sasl_mechanism, "Unknown SCRAM mechanism"};
  return std::nullopt;
}

std::optional<Refusal> invalid_deletion(const Request::ScramCredentialDeletion& d, const ScramCredentials& stored) {
  if (auto why = invalid_user_or_mechanism(d.name, d.mechanism)) return why;
  auto user = stored.find(d.name);
  if (user == stored.end() || !user->second.count(mechanism_of(d.mechanism)))
    return Refusal{p::ErrorCode::resource_not_found, "Attempt to delete a user credential that does not exist"};
  return std::nullopt;
}

std::optional<Refusal> invalid_upsertion(const Request::ScramCredentialUpsertion& u) {
  if (auto why = invalid_user_or_mechanism(u.name, u.mechanism)) return why;
  if (u.iterations < security::sasl::kScramMinIterations)
    return Refusal{p::ErrorCode::unacceptable_credential, "Too few iterations"};
  if (u.iterations > security::sasl::kScramMaxIterations)
    return Refusal{p::ErrorCode::unacceptable_credential, "Too many iterations"};
  return std::nullopt;
}

// Every user the request names, once, sorted (as getErrorResponse lists them).
std::vector<std::string> users_named(const Request& req) {
  std::vector<std::string> users;
  for (const auto& d : req.deletions) users.push_back(d.name);
  for (const auto& u : req.upsertions) users.push_back(u.name);
  std::sort(users.begin(), users.end());
  users.erase(std::unique(users.begin(), users.end()), users.end());
  return users;
}

UserResult succeeded(const std::string& user) { return {user, p::code(p::ErrorCode::none), std::nullopt, {}}; }

// ScramControlManager.alterCredentials on `stored`: applies what is valid
// and returns one result per user (the applied deletions, the applied
// upsertions, then the refusals).
std::vector<UserResult> alter_credentials(const Request& req, ScramCredentials& stored) {
  std::map<std::string, const Request::ScramCredentialDeletion*> deletions;
  std::map<std::string, const Request::ScramCredentialUpsertion*> upsertions;
  std::map<std::string, Refusal> refused;
  std::vector<std::string> refused_order;
  auto refuse = [&](const std::string& user, Refusal why) {
    refused.emplace(user, std::move(why));
    refused_order.push_back(user);
  };
  const Refusal twice{p::ErrorCode::duplicate_resource, "A user credential cannot be altered twice in the same request"};
  for (const auto& d : req.deletions) {
    if (refused.count(d.name)) continue;
    if (deletions.erase(d.name)) refuse(d.name, twice);
    else if (auto why = invalid_deletion(d, stored)) refuse(d.name, *why);
    else deletions[d.name] = &d;
  }
  for (const auto& u : req.upsertions) {
    if (refused.count(u.name)) continue;
    if (deletions.erase(u.name) + upsertions.erase(u.name) > 0) refuse(u.name, twice);
    else if (auto why = invalid_upsertion(u)) refuse(u.name, *why);
    else upsertions[u.name] = &u;
  }
  std::vector<UserResult> results;
  for (const auto& d : req.deletions)
    if (auto it = deletions.find(d.name); it != deletions.end() && it->second == &d) {
      stored[d.name].erase(mechanism_of(d.mechanism));
      results.push_back(succeeded(d.name));
    }
  for (const auto& u : req.upsertions)
    if (auto it = upsertions.find(u.name); it != upsertions.end() && it->second == &u) {
      const ScramMechanism m = mechanism_of(u.mechanism);
      stored[u.name][m] = security::sasl::scram_credential(m, u.salted_password, u.salt, u.iterations);
      results.push_back(succeeded(u.name));
    }
  for (const auto& user : refused_order) {
    const Refusal& why = refused.at(user);
    results.push_back({user, p::code(why.code), why.message, {}});
  }
  return results;
}

}  // namespace

template <>
awaitable<p::AlterUserScramCredentialsResponse> handle<p::AlterUserScramCredentialsApi>(RequestContext& ctx,
                                                                                       Request& req) {
  p::AlterUserScramCredentialsResponse resp;
  if (!authorized_on_cluster(ctx, AclOperation::alter)) {
    // Kafka's ApiError leaves out a message that only repeats the error's.
    for (const auto& user : users_named(req))
      resp.results.push_back({user, p::code(p::ErrorCode::cluster_authorization_failed), std::nullopt, {}});
    co_return resp;
  }
  // Judged again on each attempt, against what is stored then.
  auto results = std::make_shared<std::vector<UserResult>>();
  ScramCredentialManager::Change change = [&req, results](ScramCredentials& stored) {
    *results = alter_credentials(req, stored);
  };
  if (auto ec = co_await ctx.broker.scram_credentials().alter(std::move(change))) {
    // Nothing was written: every user the request names failed.
    for (const auto& user : users_named(req))
      resp.results.push_back({user, p::code(p::ErrorCode::unknown_server_error),
                              "cannot store the SCRAM credentials: " + ec.message(), {}});
    co_return resp;
  }
  resp.results = std::move(*results);
  co_return resp;
}

}  // namespace runnel::broker
