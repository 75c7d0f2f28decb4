// Which broker is the controller (Kafka's KRaft quorum leader; here etcd's
// compare-and-swap): the key `controller` holds the elected broker's id,
// bound to that broker's registration lease, so the controller's role ends
// with its session. Every registered broker campaigns: it writes the key
// if absent, and watches it to campaign again when it goes.
//
// The election's revision (the key's create revision) is the controller's
// fencing token: each of its writes compares the key against it, so a
// deposed controller's late write fails instead of undoing its successor's
// (DESIGN.md, "Cluster": a controller's writes are conditioned on its
// election key).
#pragma once

#include <functional>
#include <memory>

#include "cluster/metadata_store.h"

namespace runnel::cluster {

class ControllerElection {
 public:
  // `on_elected(revision)` when this broker becomes controller, with the
  // revision its writes must compare against; `on_resigned()` when it
  // stops being it (the key went or names another broker).
  ControllerElection(MetadataStore& store, NodeId self, std::function<void(Revision)> on_elected,
                     std::function<void()> on_resigned);
  ~ControllerElection();

  // Campaigns under `lease` (the registration's) and watches the key.
  // Call again after a re-registration with the new lease.
  void start(LeaseId lease);
  void stop();

  bool is_controller() const { return election_revision_ != 0; }
  Revision election_revision() const { return election_revision_; }
  // The condition each controller write carries.
  Compare fence() const;

 private:
  awaitable<void> campaign(std::shared_ptr<bool> alive, LeaseId lease);
  // Stops being the controller, if it was, and says so.
  void resign();
  void on_change(const std::vector<WatchEvent>& events);

  MetadataStore& store_;
  NodeId self_;
  std::function<void(Revision)> on_elected_;
  std::function<void()> on_resigned_;
  LeaseId lease_ = kNoLease;
  Revision election_revision_ = 0;
  std::unique_ptr<Watch> watch_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runnel::cluster
