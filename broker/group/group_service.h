// The broker's group coordinator in place: the __consumer_offsets topic
// (Kafka's internal compacted topic, created like Kafka's on the first
// FindCoordinator for a group, or the first record written), the store that
// appends the coordinator's records to it, the load of every partition
// before its groups are served, and the coordinator's timers (rebalances,
// sessions, offset retention) on a purgatory: an idle broker wakes only when
// one of them is due.
#pragma once

#include <memory>
#include <string>

#include "broker/asio.h"
#include "broker/group/group_coordinator.h"
#include "broker/group/purgatory_timer.h"
#include "replication/partition.h"

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::group {

inline constexpr const char* kOffsetsTopic = "__consumer_offsets";

class GroupService : public OffsetsStore {
 public:
  // When __consumer_offsets exists, every partition starts "loading".
  explicit GroupService(Broker& broker);
  // Creates __consumer_offsets if it does not exist yet.
  std::error_code ensure_offsets_topic();
  // DeleteTopics removed __consumer_offsets. Kafka 4.x accepts that (only
  // its CLI refuses): the coordinator resigns every partition, so the
  // groups and their offsets are gone at once, and the topic is created
  // again on the next FindCoordinator or commit.
  void offsets_topic_deleted();

  // In a cluster: this broker began or stopped leading a __consumer_offsets
  // partition, so it begins or stops coordinating that partition's groups
  // (Kafka's onElection / onResignation).
  void leadership_changed(int32_t partition, bool leader);

  GroupCoordinator& coordinator() { return *coordinator_; }
  // Starts loading the partitions and the offset retention checks.
  void start();

  // Appends the records as one batch to the partition's log; `done` runs
  // after the append, or with runnel.acks.all.fsync after its fsync, as an
  // acks=all produce is acknowledged.
  void append(int32_t partition, std::vector<OffsetsRecord> records, AppendDone done) override;

 private:
  awaitable<void> load_partitions();
  // Replays one partition's records into the coordinator; the number read.
  awaitable<size_t> load_partition(std::shared_ptr<replication::Partition> part);
  awaitable<std::error_code> write_batch(std::shared_ptr<replication::Partition> part, int32_t min_isr, Bytes batch);
  // Kafka's offsets.retention.check.interval.ms task, on the coordinator's timer.
  void schedule_offsets_expiration();

  Broker& broker_;
  std::unique_ptr<PurgatoryTimer> timer_;
  std::unique_ptr<GroupCoordinator> coordinator_;
};

}  // namespace runnel::broker::group
