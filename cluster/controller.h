// The controller's work while this broker holds the election (Kafka's
// QuorumController / ReplicationControlManager, for what etcd does not do
// itself): every new image is reconciled against the live brokers, and each
// partition whose leader or ISR must change (partition_change.h: reelect)
// is rewritten. Each write compares the partition's key (a leader's
// concurrent ISR change wins, and the next image is reconciled again) and
// the controller's election key (a deposed controller writes nothing).
//
// Images arrive faster than writes complete: at most one reconciliation
// runs, and it is followed by one more for the newest image that arrived
// meanwhile.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/controller_election.h"
#include "cluster/metadata_image.h"
#include "cluster/metadata_store.h"

namespace runnel::cluster {

struct ControllerOptions {
  bool unclean_leader_election = false;  // unclean.leader.election.enable; a topic's own setting wins
  // Preferred leaders come back (Kafka's auto.leader.rebalance.enable):
  // every leader.imbalance.check.interval.seconds, a broker for which more
  // than leader.imbalance.per.broker.percentage of the partitions it is the
  // preferred (first) replica of are led elsewhere gets them back, where it
  // is live and in the ISR.
  bool auto_leader_rebalance = true;
  std::chrono::milliseconds imbalance_check_interval{300'000};
  int32_t imbalance_percentage = 10;
  // Partition changes per transaction: each is an op and up to two
  // compares (its key's, its topic's), plus the election fence, and etcd
  // refuses more than --max-txn-ops (128 by default) compares or ops.
  size_t max_ops_per_txn = 63;
};

class Controller {
 public:
  using Log = std::function<void(const std::string&)>;
  Controller(MetadataStore& store, const ControllerElection& election, ControllerOptions options, Log log);
  ~Controller();

  // The newest image; acted on only while this broker is the controller.
  void on_image(ImagePtr image);
  // Partitions rewritten so far (for tests and metrics).
  uint64_t elections_written() const { return written_; }

 private:
  awaitable<void> run(std::shared_ptr<bool> alive);
  awaitable<void> reconcile(const MetadataImage& image);
  awaitable<void> rebalance_checks(std::shared_ptr<bool> alive);
  struct Change {
    const TopicImage* topic;
    int32_t partition;
    const PartitionRegistration* current;
    PartitionRegistration next;
  };
  // Writes the changes, each compared at its key's current revision, in
  // fenced transactions of at most max_ops_per_txn; stops at the first
  // that fails (the image it raced with is reconciled next).
  awaitable<void> write(std::vector<Change> changes, const char* why);

  MetadataStore& store_;
  const ControllerElection& election_;
  ControllerOptions options_;
  Log log_;
  ImagePtr next_;
  ImagePtr latest_;
  bool running_ = false;
  bool rebalancing_ = false;
  uint64_t written_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runnel::cluster
