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
#include "cluster/metadata_store.h"

namespace runnel::broker {

class ScramCredentialManager {
 public:
  explicit ScramCredentialManager(cluster::MetadataStore& store);

  // Reads the stored credentials (at startup, before serving).
  awaitable<std::error_code> load();
  // The stored value at `revision` (nullopt: the key was deleted), as a
  // watch delivers it; an older revision than the one applied is ignored,
  // and a value that does not decode is ignored with a warning.
  void stored_changed(const std::optional<std::string>& value, cluster::Revision revision);

  // What the SASL/SCRAM exchange checks a client's proof against; nullopt
  // for a user without a credential for `mechanism`. On the event loop.
  std::optional<security::sasl::ScramCredential> credential(const std::string& user,
                                                            security::sasl::ScramMechanism mechanism) const;
  // Every user's credentials, as DescribeUserScramCredentials lists them.
  const ScramCredentials& credentials() const { return credentials_; }

  // Edits the credentials in one write: reads the stored set, lets
  // `change` edit a copy, writes it back conditioned on the read (asking
  // `change` again, on the new stored set, when another broker wrote in
  // between), then applies it. `change` judges what is stored, as Kafka's
  // controller judges its current image.
  using Change = std::function<void(ScramCredentials& credentials)>;
  awaitable<std::error_code> alter(Change change);

 private:
  void apply(ScramCredentials credentials, cluster::Revision revision);

  cluster::MetadataStore& store_;
  ScramCredentials credentials_;
  cluster::Revision revision_ = -1;
};

}  // namespace runnel::broker
