#include "broker/scram_credential_manager.h"

#include "cluster/etcd/key_layout.h"

namespace runnel::broker {

using security::sasl::ScramCredential;
using security::sasl::ScramMechanism;

ScramCredentialManager::ScramCredentialManager(cluster::MetadataStore& store)
    : stored_(store, cluster::keys::kScramCredentials, "SCRAM credentials", &encode_scram_credentials,
              &decode_scram_credentials) {}

std::optional<ScramCredential> ScramCredentialManager::credential(const std::string& user,
                                                                  ScramMechanism mechanism) const {
  const ScramCredentials& credentials = stored_.value();
  auto u = credentials.find(user);
  if (u == credentials.end()) return std::nullopt;
  auto m = u->second.find(mechanism);
  if (m == u->second.end()) return std::nullopt;
  return m->second;
}

}  // namespace runnel::broker
