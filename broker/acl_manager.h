// The broker's authorizer and the ACLs it holds (authorizer.class.name set):
// CreateAcls and DeleteAcls change the stored set (metadata key "acls":
// etcd in a cluster, runnel-acls.json on a single node) by compare-and-swap,
// then apply it here; in a cluster every other broker applies it from its
// metadata watch (ClusterMember's acls_changed hook), as Kafka's brokers
// replay ACL records from the metadata log.
#pragma once

#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "broker/asio.h"
#include "broker/config.h"
#include "cluster/metadata_store.h"
#include "security/authorizer/standard_authorizer.h"

namespace runnel::broker {

class AclManager {
 public:
  AclManager(cluster::MetadataStore& store, const BrokerConfig& config);

  // Reads the stored ACLs (at startup, before serving).
  awaitable<std::error_code> load();
  const security::StandardAuthorizer& authorizer() const { return authorizer_; }
  // The stored value at `revision` (nullopt: the key was deleted), as a
  // watch delivers it; a value that does not decode is ignored with a warning.
  void stored_changed(const std::optional<std::string>& value, cluster::Revision revision);

  // Adds the bindings (each already valid) that are not there yet.
  awaitable<std::error_code> create(std::vector<security::AclBinding> bindings);
  // Removes every binding matching each filter; what each filter removed,
  // one list per filter (a binding that matches two filters is listed under both).
  awaitable<cluster::Result<std::vector<std::vector<security::AclBinding>>>> remove(
      std::vector<security::AclBindingFilter> filters);

 private:
  using Change = std::function<std::vector<security::AclBinding>(const std::vector<security::AclBinding>&)>;
  // Reads the stored set, applies `change`, writes it back conditioned on
  // the read (retrying when another broker wrote in between), then applies it.
  awaitable<std::error_code> update(Change change);

  cluster::MetadataStore& store_;
  security::StandardAuthorizer authorizer_;
};

}  // namespace runnel::broker
