// This broker's registration in the cluster (Kafka's BrokerLifecycleManager
// with the controller's session tracking, done by the store's lease):
// brokers/<id> holds its endpoints and rack, bound to a lease of
// broker.session.timeout.ms that a heartbeat renews every
// broker.heartbeat.interval.ms. When the broker dies or is cut off, the
// lease expires, the key goes, and the controller re-elects its partitions.
//
// Fencing (DESIGN.md, "Cluster"): a broker that cannot renew its lease must
// stop leading before the lease can have expired and another broker be
// elected in its place. The registry calls on_lost once the last renewal
// is older than the session timeout less one heartbeat interval, then,
// once the store answers, resumes its lease if that is still alive (an etcd
// that restarted restores leases: the registration never went, so nobody
// was elected in this broker's place; same epoch) or registers anew (a new
// lease, a new broker epoch).
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "cluster/metadata_image.h"
#include "cluster/metadata_store.h"

namespace runnel::cluster {

struct RegistryOptions {
  std::chrono::milliseconds session_timeout{9000};    // broker.session.timeout.ms
  std::chrono::milliseconds heartbeat_interval{2000};  // broker.heartbeat.interval.ms
};

class BrokerRegistry {
 public:
  BrokerRegistry(MetadataStore& store, BrokerRegistration self, RegistryOptions options);
  ~BrokerRegistry();

  // Registers, waiting (bounded by `limit`) while another registration of
  // this node id is live: a restarted broker's old session must expire
  // first, as Kafka's controller refuses a duplicate registration. Then
  // heartbeats until stop(). `on_lost` runs when the session may have
  // ended; `on_registered` after each (re-)registration with the new epoch.
  awaitable<std::error_code> start(std::chrono::milliseconds limit, std::function<void()> on_lost,
                                   std::function<void(int64_t epoch)> on_registered);
  // Controlled shutdown's first step (Kafka's inControlledShutdown): the
  // registration is rewritten fenced, under the same lease, so the
  // controller moves this broker's leaderships to other ISR members and
  // takes it out of the ISRs while it still serves.
  awaitable<std::error_code> fence_for_shutdown();
  // Controlled shutdown's last step: the lease is revoked, so the key goes
  // now (the error when the store could not be told: the lease then expires).
  awaitable<std::error_code> stop();

  bool registered() const { return lease_ != kNoLease; }
  LeaseId lease() const { return lease_; }
  int64_t epoch() const { return epoch_; }

 private:
  // One attempt: a lease, then the key if absent. false: the id is taken.
  awaitable<Result<bool>> try_register();
  // The lapsed lease renewed and this registration still under it: true.
  awaitable<bool> resume(LeaseId lapsed);
  awaitable<void> heartbeats(std::shared_ptr<bool> alive);

  MetadataStore& store_;
  BrokerRegistration self_;
  RegistryOptions options_;
  std::function<void()> on_lost_;
  std::function<void(int64_t)> on_registered_;
  LeaseId lease_ = kNoLease;
  int64_t epoch_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runnel::cluster
