#include "broker/acl_manager.h"

#include <algorithm>

#include "broker/logging.h"
#include "cluster/errors.h"
#include "cluster/etcd/key_layout.h"
#include "security/authorizer/acl_codec.h"

namespace runnel::broker {

namespace {

using security::AclBinding;

// A compare-and-swap lost to another broker's write is retried; this many
// losses in a row (an ACL storm from many brokers) fail the request.
constexpr int kAttempts = 20;

security::AuthorizerOptions options_of(const BrokerConfig& config) {
  return {security::parse_super_users(config.get_string("super.users")),
          config.get_bool("allow.everyone.if.no.acl.found")};
}

}  // namespace

AclManager::AclManager(cluster::MetadataStore& store, const BrokerConfig& config)
    : store_(store), authorizer_(options_of(config)) {}

awaitable<std::error_code> AclManager::load() {
  auto kv = co_await store_.get(cluster::keys::kAcls);
  if (!kv) co_return kv.error();
  if (!*kv) co_return std::error_code{};
  auto acls = security::decode_acls((*kv)->value);
  if (!acls) co_return make_error_code(cluster::ClusterErrc::corrupt_file);
  authorizer_.replace(*acls, (*kv)->mod_revision);
  RLOG_INFO("authorizer: %zu ACL binding(s) loaded", acls->size());
  co_return std::error_code{};
}

void AclManager::stored_changed(const std::optional<std::string>& value, cluster::Revision revision) {
  if (!value) {
    authorizer_.replace({}, revision);
    return;
  }
  auto acls = security::decode_acls(*value);
  if (!acls) {
    RLOG_WARN("ignoring stored ACLs at revision %lld: they do not decode", static_cast<long long>(revision));
    return;
  }
  authorizer_.replace(*acls, revision);
}

awaitable<std::error_code> AclManager::update(Change change) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto kv = co_await store_.get(cluster::keys::kAcls);
    if (!kv) co_return kv.error();
    std::vector<AclBinding> current;
    cluster::Revision expected = cluster::kAbsent;
    if (*kv) {
      auto decoded = security::decode_acls((*kv)->value);
      if (!decoded) co_return make_error_code(cluster::ClusterErrc::corrupt_file);
      current = std::move(*decoded);
      expected = (*kv)->mod_revision;
    }
    std::vector<AclBinding> next = change(current);
    if (next == current) {
      // Nothing to write, but this broker may not have heard of the stored
      // set yet (another broker's write still on its way through the watch).
      if (*kv) authorizer_.replace(current, expected);
      co_return std::error_code{};
    }
    auto written = co_await store_.compare_and_swap(cluster::keys::kAcls, expected, security::encode_acls(next));
    if (!written) co_return written.error();
    if (!written->succeeded) continue;
    authorizer_.replace(next, written->revision);
    co_return std::error_code{};
  }
  co_return make_error_code(cluster::ClusterErrc::unavailable);
}

awaitable<std::error_code> AclManager::create(std::vector<AclBinding> bindings) {
  Change add = [bindings](const std::vector<AclBinding>& current) {
    std::vector<AclBinding> next = current;
    for (const auto& b : bindings)
      if (std::find(next.begin(), next.end(), b) == next.end()) next.push_back(b);
    std::sort(next.begin(), next.end());
    return next;
  };
  co_return co_await update(std::move(add));
}

awaitable<cluster::Result<std::vector<std::vector<AclBinding>>>> AclManager::remove(
    std::vector<security::AclBindingFilter> filters) {
  auto removed = std::make_shared<std::vector<std::vector<AclBinding>>>();
  Change drop = [filters, removed](const std::vector<AclBinding>& current) {
    removed->assign(filters.size(), {});
    std::vector<AclBinding> next;
    for (const auto& b : current) {
      bool gone = false;
      for (size_t i = 0; i < filters.size(); ++i)
        if (security::matches(filters[i], b)) {
          (*removed)[i].push_back(b);
          gone = true;
        }
      if (!gone) next.push_back(b);
    }
    return next;
  };
  if (auto ec = co_await update(std::move(drop))) co_return ec;
  co_return std::move(*removed);
}

}  // namespace runnel::broker
