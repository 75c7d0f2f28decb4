// In a cluster, what this broker hosts follows the metadata image (Kafka's
// ReplicaManager.applyDelta with its log creation and stopPartitions):
//   - every topic of the image is in the topic table, with one slot per
//     partition (topic_table.h, mirror());
//   - a partition this broker is a replica of is opened (its log created
//     if new) on the blocking pool and put in its slot, then leads or
//     follows as its registration says: a leader stops fetching, a
//     follower fetches from its leader (the Followers hooks);
//   - a partition no longer assigned here, or of a deleted topic, stops
//     fetching, leaves the table, and its log is removed (Kafka's
//     "-delete" rename), also on a broker that was down when it happened:
//     the first image after a restart no longer names it.
//
// Each image is reconciled whole against the table, not applied as a
// delta, so an image that jumped (a reload after the watch ended, a
// broker fenced and registered again) needs nothing special. One
// reconciliation runs at a time and is followed by one for the newest
// image that arrived meanwhile, as the controller's are.
//
// Fenced (the session may have lapsed): every partition this broker leads
// is made a follower of no one until it has registered again, so no
// produce is acknowledged by a broker the controller may already have
// replaced.
//
// Event-loop only; disk work goes to the broker's blocking pool.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/asio.h"
#include "cluster/metadata_image.h"
#include "replication/partition.h"

namespace runnel::broker {

class Broker;

struct Followers {
  // Fetch this partition from `leader`, at `leader_epoch`.
  std::function<void(std::shared_ptr<replication::Partition>, NodeId leader, LeaderEpoch leader_epoch)> follow;
  // Stop fetching it (it leads, is leaderless, or goes).
  std::function<void(const std::string& topic, PartitionId partition)> unfollow;
};

class HostedPartitions {
 public:
  HostedPartitions(Broker& broker, Followers followers);
  ~HostedPartitions();

  void on_image(cluster::ImagePtr image);
  void fence();
  void unfence();
  // Whether the newest image given has been reconciled.
  bool caught_up() const { return !running_ && !next_; }
  // Returns once it is, or after `bound`.
  awaitable<void> wait_caught_up(std::chrono::milliseconds bound);
  // Whether the newest image names this broker the partition's leader but
  // the replica is not open yet: a client that saw the image on another
  // broker may already send here, a moment before reconciliation (on the
  // blocking pool) has opened it. Requests that would be answered
  // NOT_LEADER_OR_FOLLOWER for it wait (wait_caught_up) instead: an acks=0
  // producer never sees that answer (its records would be lost) and some
  // clients (sarama's GetOffset) retry only once. False whenever caught up.
  bool leads_unopened(const std::string& topic, PartitionId partition) const;
  // How long such a request waits at most (a Produce: no longer than its timeout).
  static constexpr std::chrono::milliseconds kOpeningWaitBound{5000};

 private:
  awaitable<void> run(std::shared_ptr<bool> alive);
  awaitable<void> reconcile(const cluster::MetadataImage& image);
  awaitable<void> remove_topic(std::string name);
  // Leads or follows as the registration says (or follows no one, fenced).
  void apply(const std::shared_ptr<replication::Partition>& partition, const cluster::PartitionRegistration& registration);

  Broker& broker_;
  Followers followers_;
  cluster::ImagePtr next_;
  cluster::ImagePtr last_;
  bool running_ = false;
  bool fenced_ = false;
  std::vector<std::shared_ptr<asio::steady_timer>> waiters_;  // wait_caught_up's, woken by cancel()
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runnel::broker
