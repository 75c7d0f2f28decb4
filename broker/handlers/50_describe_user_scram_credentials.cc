// DescribeUserScramCredentials (key 50): each user's SCRAM mechanisms and
// iteration counts, never the credentials, as Kafka's KafkaApis and
// ScramImage.describe answer. DESCRIBE on the cluster is required
// (CLUSTER_AUTHORIZATION_FAILED at the top and once per user asked, as
// DescribeUserScramCredentialsRequest.getErrorResponse answers). Null or
// empty users: every user with a credential. A user asked for twice is
// answered once, DUPLICATE_RESOURCE; one without a credential
// RESOURCE_NOT_FOUND, each with Kafka's message.
#include <map>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/scram_credential_manager.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using UserResult = p::DescribeUserScramCredentialsResponse::DescribeUserScramCredentialsResult;

constexpr const char* kDuplicateUser = "Cannot describe SCRAM credentials for the same user twice in a single request: ";
constexpr const char* kNoSuchUser = "Attempt to describe a user credential that does not exist: ";

UserResult described(const std::string& user, const ScramCredentials& stored) {
  UserResult r;
  r.user = user;
  auto it = stored.find(user);
  if (it == stored.end()) {
    r.error_code = p::code(p::ErrorCode::resource_not_found);
    r.error_message = kNoSuchUser + user;
    return r;
  }
  for (const auto& [mechanism, credential] : it->second)
    r.credential_infos.push_back({static_cast<int8_t>(mechanism), credential.iterations, {}});
  return r;
}

}  // namespace

template <>
awaitable<p::DescribeUserScramCredentialsResponse> handle<p::DescribeUserScramCredentialsApi>(
    RequestContext& ctx, p::DescribeUserScramCredentialsRequest& req) {
  p::DescribeUserScramCredentialsResponse resp;
  if (!authorized_on_cluster(ctx, AclOperation::describe)) {
    // Kafka's ApiError leaves out a message that only repeats the error's.
    resp.error_code = p::code(p::ErrorCode::cluster_authorization_failed);
    resp.error_message = std::nullopt;
    if (req.users)
      for (size_t i = 0; i < req.users->size(); ++i)
        resp.results.push_back({{}, p::code(p::ErrorCode::cluster_authorization_failed), std::nullopt, {}, {}});
    co_return resp;
  }
  const ScramCredentials& stored = ctx.broker.scram_credentials().credentials();
  if (!req.users || req.users->empty()) {
    for (const auto& [user, mechanisms] : stored) resp.results.push_back(described(user, stored));
    co_return resp;
  }
  // Each user once, in the order first asked: true when asked again.
  std::map<std::string, bool> repeated;
  std::vector<std::string> order;
  for (const auto& u : *req.users) {
    auto [it, added] = repeated.emplace(u.name, false);
    if (added) order.push_back(u.name);
    else it->second = true;
  }
  for (const auto& user : order) {
    if (!repeated[user]) {
      resp.results.push_back(described(user, stored));
      continue;
    }
    UserResult r;
    r.user = user;
    r.error_code = p::code(p::ErrorCode::duplicate_resource);
    r.error_message = kDuplicateUser + user;
    resp.results.push_back(std::move(r));
  }
  co_return resp;
}

}  // namespace runnel::broker
