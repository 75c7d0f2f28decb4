// The broker's group coordinator in place: the __consumer_offsets topic
// (Kafka's internal compacted topic, created like Kafka's on the first
// FindCoordinator for a group, or the first record written), the store that
// appends the coordinator's records to it, the load of every partition
// before its groups are served, and the coordinator's timers (rebalances,
// sessions, offset retention) on a purgatory: an idle broker wakes only when
// one of them is due.
//
// A single node coordinates every partition. In a cluster, as Kafka's
// coordinator is sharded, a broker coordinates the groups of the
// __consumer_offsets partitions it leads: it owns and loads one when its
// image makes it the leader, and unloads it when it no longer is (another
// leader, reassigned, fenced); FindCoordinator sends clients to the
// leader, and the other brokers answer NOT_COORDINATOR.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "broker/asio.h"
#include "broker/group/consumer/metadata_topics_image.h"
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
  // Kafka's auto-creation on FindCoordinator and on a coordinator write:
  // unless __consumer_offsets exists, starts its creation (one at a time)
  // through the topic front end, whose disk work is off the event loop,
  // and the caller answers COORDINATOR_NOT_AVAILABLE meanwhile. In a
  // cluster with offsets.topic.replication.factor; with fewer live brokers
  // than that nothing is created (Kafka's controller refuses it with
  // INVALID_REPLICATION_FACTOR, and FindCoordinator keeps answering
  // COORDINATOR_NOT_AVAILABLE). A single node's has one replica.
  void request_offsets_topic();
  // A single node: requests the creation if needed and waits until it is
  // done, so a client's first FindCoordinator is answered with this node
  // rather than told to retry. Whether the topic exists.
  awaitable<bool> offsets_topic_ready();
  // DeleteTopics removed __consumer_offsets. Kafka 4.x accepts that (only
  // its CLI refuses): the coordinator resigns every partition, so the
  // groups and their offsets are gone at once, and the topic is created
  // again on the next FindCoordinator or commit.
  void offsets_topic_deleted();

  // In a cluster: this broker began or stopped leading a __consumer_offsets
  // partition, so it begins or stops coordinating that partition's groups
  // (Kafka's onElection / onResignation). Election owns the partition and
  // loads it (its groups answer COORDINATOR_LOAD_IN_PROGRESS meanwhile); a
  // broker already coordinating it (a new leader epoch, an ISR change)
  // keeps what it has. Resignation unloads the partition's groups and their
  // offsets; their waiting JoinGroups and SyncGroups answer NOT_COORDINATOR.
  void leadership_changed(int32_t partition, bool leader);

  GroupCoordinator& coordinator() { return *coordinator_; }
  // Starts loading the partitions and the offset retention checks.
  void start();

  // Appends the records as one batch to the partition's log; `done` runs
  // after the append, or with runnel.acks.all.fsync after its fsync, as an
  // acks=all produce is acknowledged.
  void write(int32_t partition, std::vector<OffsetsRecord> records, std::optional<TxnProducer> producer,
             WriteDone done) override;

 private:
  awaitable<void> load_partitions();
  // Replays one partition's records into the coordinator; the number read.
  // A load overtaken by a resignation (or another election) replays nothing.
  awaitable<size_t> load_partition(std::shared_ptr<replication::Partition> part, uint64_t generation);
  awaitable<void> create_offsets_topic(int16_t replication_factor);
  awaitable<Written> write_batch(std::shared_ptr<replication::Partition> part, int32_t min_isr, Bytes batch);
  // Kafka's offsets.retention.check.interval.ms task, on the coordinator's timer.
  void schedule_offsets_expiration();

  Broker& broker_;
  consumer::MetadataTopicsImage topics_image_;  // the consumer groups' view of the topics
  std::unique_ptr<PurgatoryTimer> timer_;
  std::unique_ptr<GroupCoordinator> coordinator_;
  // A creation of __consumer_offsets is in flight; `offsets_topic_done_`
  // never expires and is cancelled when it ends, waking offsets_topic_ready.
  bool creating_offsets_topic_ = false;
  asio::steady_timer offsets_topic_done_;
  // Per partition, bumped at each election and resignation: a load checks
  // it is still the current one before it replays.
  std::map<int32_t, uint64_t> load_generation_;
};

}  // namespace runnel::broker::group
