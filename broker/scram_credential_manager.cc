#include "broker/scram_credential_manager.h"

#include "broker/logging.h"
#include "cluster/errors.h"
#include "cluster/etcd/key_layout.h"

namespace runnel::broker {

namespace {

using security::sasl::ScramCredential;
using security::sasl::ScramMechanism;

// A compare-and-swap lost to another broker's write is retried; this many
// losses in a row fail the request (as AclManager's).
constexpr int kAttempts = 20;

}  // namespace

ScramCredentialManager::ScramCredentialManager(cluster::MetadataStore& store) : store_(store) {}

awaitable<std::error_code> ScramCredentialManager::load() {
  auto kv = co_await store_.get(cluster::keys::kScramCredentials);
  if (!kv) co_return kv.error();
  if (!*kv) co_return std::error_code{};
  auto stored = decode_scram_credentials((*kv)->value);
  if (!stored) co_return make_error_code(cluster::ClusterErrc::corrupt_file);
  RLOG_INFO("SCRAM credentials of %zu user(s) loaded", stored->size());
  apply(std::move(*stored), (*kv)->mod_revision);
  co_return std::error_code{};
}

void ScramCredentialManager::stored_changed(const std::optional<std::string>& value, cluster::Revision revision) {
  if (!value) {
    apply({}, revision);
    return;
  }
  auto stored = decode_scram_credentials(*value);
  if (!stored) {
    RLOG_WARN("ignoring stored SCRAM credentials at revision %lld: they do not decode",
              static_cast<long long>(revision));
    return;
  }
  apply(std::move(*stored), revision);
}

void ScramCredentialManager::apply(ScramCredentials credentials, cluster::Revision revision) {
  // A watch event can arrive after this broker applied its own later write.
  if (revision < revision_) return;
  revision_ = revision;
  credentials_ = std::move(credentials);
}

std::optional<ScramCredential> ScramCredentialManager::credential(const std::string& user,
                                                                  ScramMechanism mechanism) const {
  auto u = credentials_.find(user);
  if (u == credentials_.end()) return std::nullopt;
  auto m = u->second.find(mechanism);
  if (m == u->second.end()) return std::nullopt;
  return m->second;
}

awaitable<std::error_code> ScramCredentialManager::alter(Change change) {
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    auto kv = co_await store_.get(cluster::keys::kScramCredentials);
    if (!kv) co_return kv.error();
    ScramCredentials current;
    cluster::Revision expected = cluster::kAbsent;
    if (*kv) {
      auto decoded = decode_scram_credentials((*kv)->value);
      if (!decoded) co_return make_error_code(cluster::ClusterErrc::corrupt_file);
      current = std::move(*decoded);
      expected = (*kv)->mod_revision;
    }
    ScramCredentials next = current;
    change(next);
    std::erase_if(next, [](const auto& user) { return user.second.empty(); });
    if (next == current) {
      // Nothing to write, but this broker may not have heard of the stored
      // set yet (another broker's write still on its way through the watch).
      if (*kv) apply(std::move(current), expected);
      co_return std::error_code{};
    }
    auto written = co_await store_.compare_and_swap(cluster::keys::kScramCredentials, expected,
                                                    encode_scram_credentials(next));
    if (!written) co_return written.error();
    if (!written->succeeded) continue;
    apply(std::move(next), written->revision);
    co_return std::error_code{};
  }
  co_return make_error_code(cluster::ClusterErrc::unavailable);
}

}  // namespace runnel::broker
