// The users' SCRAM credentials (Kafka's ScramControlManager and the
// brokers' CredentialCache): AlterUserScramCredentials changes the stored
// set (metadata key "scram_credentials": etcd in a cluster,
// runnel-scram-credentials.json on a single node) by compare-and-swap, then
// applies it here; in a cluster every other broker applies it from its
// metadata watch (ClusterMember's scram_credentials_changed hook), as
// Kafka's brokers replay UserScramCredentialRecords, so a user altered
// through one broker authenticates through any.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <system_error>

#include "broker/asio.h"
#include "broker/scram_credentials_codec.h"
#include "broker/stored_document.h"
#include "cluster/metadata_store.h"

namespace runnel::broker {

class ScramCredentialManager {
 public:
  explicit ScramCredentialManager(cluster::MetadataStore& store);

  // Reads the stored credentials (at startup, before serving).
  awaitable<std::error_code> load() { return stored_.load(); }
  // The stored value at `revision`, as a watch delivers it (stored_document.h).
  void stored_changed(const std::optional<std::string>& value, cluster::Revision revision) {
    stored_.stored_changed(value, revision);
  }

  // What the SASL/SCRAM exchange checks a client's proof against; nullopt
  // for a user without a credential for `mechanism`. On the event loop.
  std::optional<security::sasl::ScramCredential> credential(const std::string& user,
                                                            security::sasl::ScramMechanism mechanism) const;
  // Every user's credentials, as DescribeUserScramCredentials lists them.
  const ScramCredentials& credentials() const { return stored_.value(); }

  // Edits the credentials in one compare-and-swap write, then applies them
  // (StoredDocument::alter); a user left with no credential is dropped.
  using Change = StoredDocument<ScramCredentials>::Change;
  awaitable<std::error_code> alter(Change change) { return stored_.alter(std::move(change)); }

 private:
  StoredDocument<ScramCredentials> stored_;
};

}  // namespace runnel::broker
