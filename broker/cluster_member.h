// This broker as a member of a cluster whose metadata is in etcd (Kafka's
// BrokerServer lifecycle: BrokerLifecycleManager, the metadata loader and
// its publishers, and the controller it may become). It
//   - registers the broker under its session lease and heartbeats
//     (cluster/broker_registry.h), campaigning for the controller's key
//     under the same lease (cluster/controller_election.h);
//   - loads every key once, then watches the store from the next revision
//     and publishes each resulting image into the metadata cache, in
//     revision order (cluster/metadata_loader.h); a watch that ends (etcd
//     compacted past it, every endpoint gone) is replaced by a fresh load;
//   - while it holds the election, hands every image to the controller
//     (cluster/controller.h), which re-elects leaders as brokers come and go.
//
// Fencing: when the registry says the session may have lapsed, `fenced`
// runs before any other broker can have been elected in this one's place
// (broker_registry.h says why the timing holds); `registered` runs after
// each registration, the first included, once the image is current again.
//
// Event-loop only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "broker/asio.h"
#include "cluster/broker_registry.h"
#include "cluster/controller.h"
#include "cluster/controller_election.h"
#include "cluster/metadata_cache.h"
#include "cluster/metadata_loader.h"
#include "cluster/metadata_store.h"

namespace runnel::broker {

struct ClusterMemberOptions {
  cluster::RegistryOptions registry;      // broker.session.timeout.ms, broker.heartbeat.interval.ms
  cluster::ControllerOptions controller;  // unclean.leader.election.enable
};

struct ClusterMemberHooks {
  std::function<void()> fenced;
  std::function<void()> registered;
  // A dynamic broker-config key (configs/broker/...) changed, by this
  // broker or another: its new value, nullopt when deleted.
  std::function<void(const std::string& key, const std::optional<std::string>& value)> config_changed;
  // The ACLs key changed (or was read again after the watch ended): its
  // value at `revision`, nullopt when absent or deleted.
  std::function<void(const std::optional<std::string>& value, int64_t revision)> acls_changed;
  // The SCRAM credentials key changed, heard as acls_changed is.
  std::function<void(const std::optional<std::string>& value, int64_t revision)> scram_credentials_changed;
  // The client quotas key changed, heard as acls_changed is.
  std::function<void(const std::optional<std::string>& value, int64_t revision)> client_quotas_changed;
};

class ClusterMember {
 public:
  ClusterMember(cluster::MetadataStore& store, cluster::MetadataCache& cache, std::string cluster_id, NodeId self,
                ClusterMemberOptions options, ClusterMemberHooks hooks);
  ~ClusterMember();

  // Loads the image and watches it, then registers `self` (waiting, within
  // `limit`, for a previous session of this node id to expire) and
  // campaigns. The error when the store cannot be read or the id stays taken.
  awaitable<std::error_code> start(cluster::BrokerRegistration self, std::chrono::milliseconds limit);
  // Controlled shutdown (controlled.shutdown.enable): the registration is
  // fenced, and this waits (within `limit`) until the controller has given
  // every partition this broker leads to another live ISR member, while
  // the broker goes on serving, so clients move with a retriable error.
  awaitable<void> hand_over_leadership(std::chrono::milliseconds limit);
  // Leaves the cluster: the controller role and the registration end (the
  // lease is revoked, so the controller re-elects this broker's partitions now).
  awaitable<void> leave();

  int64_t broker_epoch() const { return registry_ ? registry_->epoch() : -1; }
  bool registered() const { return registry_ && registry_->registered(); }
  bool is_controller() const { return election_.is_controller(); }

 private:
  // range("") into the loader and the cache, then a watch from the next revision.
  awaitable<std::error_code> load_and_watch();
  void on_watch(std::error_code ec, const std::vector<cluster::WatchEvent>& events);
  awaitable<void> reload_after_watch_ended(std::shared_ptr<bool> alive);
  // Runs the `registered` hook once the image has reached the registration
  // at `epoch` (its revision), unless the registration changed meanwhile.
  awaitable<void> unfence_when_current(int64_t epoch, std::shared_ptr<bool> alive);

  cluster::MetadataStore& store_;
  cluster::MetadataCache& cache_;
  NodeId self_;
  ClusterMemberOptions options_;
  ClusterMemberHooks hooks_;
  cluster::MetadataLoader loader_;
  std::unique_ptr<cluster::Watch> watch_;
  std::unique_ptr<cluster::BrokerRegistry> registry_;
  cluster::ControllerElection election_;
  cluster::Controller controller_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runnel::broker
