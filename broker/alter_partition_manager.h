// A cluster leader's changes of its partitions' ISR (Kafka's
// AlterPartitionManager with Partition.maybeShrinkIsr / maybeExpandIsr;
// here the leader writes the partition's key itself, where Kafka's sends
// AlterPartition to its controller):
//   - every replica.lag.time.max.ms / 2, each ISR member that has not
//     caught up with the leader for replica.lag.time.max.ms leaves;
//   - a follower that has caught up to the high watermark (and into the
//     leader's epoch) joins again as soon as its fetch says so.
//
// Each change is checked as Kafka's controller checks AlterPartition
// (cluster/partition_change.h, alter_isr) and written by compare-and-swap
// on the partition's key at the revision the leader's image holds, so a
// controller's re-election in between makes it fail: the leader has been
// replaced and the next image tells it. The ISR a leader uses for its high
// watermark changes only when the image brings the written registration
// back (the change "takes effect" after it is durable), and a shrink
// written while acks=all produces wait completes them once it does.
//
// One change per partition in flight; a partition whose change failed is
// looked at again at the next check. Event-loop only.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "broker/asio.h"
#include "replication/partition.h"

namespace runnel::broker {

class Broker;

class AlterPartitionManager {
 public:
  AlterPartitionManager(Broker& broker, std::chrono::milliseconds replica_lag_time_max);
  ~AlterPartitionManager();

  // Starts the periodic shrink checks.
  void start();
  // After a follower's fetch moved its state: joins it to the ISR if it
  // has caught up (Kafka's maybeExpandIsr).
  void maybe_expand_isr(replication::Partition& partition, NodeId follower);
  // ISR changes this leader wrote (Kafka's IsrShrinksPerSec, IsrExpandsPerSec).
  uint64_t isr_shrinks() const { return isr_shrinks_; }
  uint64_t isr_expands() const { return isr_expands_; }

 private:
  awaitable<void> shrink_checks(std::shared_ptr<bool> alive);
  void maybe_shrink_isr(replication::Partition& partition);
  // Writes `isr` as the partition's new ISR, unless a change of it is in flight.
  void submit(replication::Partition& partition, std::vector<NodeId> isr, const char* why);
  awaitable<void> write(std::string topic, PartitionId id, LeaderEpoch epoch, std::vector<NodeId> isr,
                        std::string why);

  Broker& broker_;
  std::chrono::milliseconds lag_max_;
  std::set<std::pair<std::string, int32_t>> in_flight_;
  uint64_t isr_shrinks_ = 0;  // on the event loop, as /metrics reads them
  uint64_t isr_expands_ = 0;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runnel::broker
