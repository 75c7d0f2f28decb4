// The transaction coordinator in place (transaction_coordinator.h):
// __transaction_state, Kafka's internal compacted topic, created like
// Kafka's on the first FindCoordinator for a transactional id; the log the
// coordinator writes through; the load of each partition before its ids are
// served; the marker channel (this broker's partitions through
// marker_writer.h); and the coordinator's two periodic tasks.
//
// A single node coordinates every partition. In a cluster, as Kafka's
// coordinator is sharded, a broker coordinates the ids of the
// __transaction_state partitions it leads, at the partition's leader epoch
// as coordinator epoch: it owns and loads one when its image makes it the
// leader and unloads it when it no longer is (leadership_changed). Markers
// for partitions another broker leads go to that broker as WriteTxnMarkers
// (InterBrokerChannel); the leader's epoch checks fence a deposed
// coordinator's markers.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "broker/asio.h"
#include "broker/transaction/transaction_coordinator.h"
#include "replication/partition.h"

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::transaction {

inline constexpr const char* kTransactionStateTopic = "__transaction_state";

class TransactionService : public TxnStateLog, public TxnMarkerChannel, public ProducerIdSource {
 public:
  explicit TransactionService(Broker& broker);

  // As GroupService::offsets_topic_ready: creates __transaction_state if
  // needed and waits for it. Whether it exists. In a cluster with
  // transaction.state.log.replication.factor replicas and
  // transaction.state.log.min.isr; with fewer live brokers than the factor
  // nothing is created (Kafka's controller refuses it) and FindCoordinator
  // answers COORDINATOR_NOT_AVAILABLE.
  awaitable<bool> state_topic_ready();
  // In a cluster: this broker began or stopped leading a __transaction_state
  // partition (Kafka's onElection / onResignation). Election owns it at the
  // leader epoch and loads it (its ids answer COORDINATOR_LOAD_IN_PROGRESS
  // meanwhile); a new leader epoch reloads it at that epoch; an ISR change
  // keeps what it has. Resignation unloads its ids: their waits end with
  // NOT_COORDINATOR and the new leader finishes their transactions.
  void leadership_changed(int32_t partition, bool leader, int32_t leader_epoch);
  // The broker coordinating `transactional_id` (the leader of its
  // __transaction_state partition, registered and not fenced); nullopt when
  // there is none, or no topic yet. A single node: itself.
  std::optional<NodeId> coordinator_node(const std::string& transactional_id) const;
  // DeleteTopics removed __transaction_state: every id is unloaded.
  void state_topic_deleted();
  void start();

  TransactionCoordinator& coordinator() { return *coordinator_; }

  // TxnStateLog, TxnMarkerChannel, ProducerIdSource
  awaitable<ErrorCode> append(int32_t partition, protocol::Bytes key, std::optional<protocol::Bytes> value,
                              bool sync) override;
  awaitable<void> send(std::span<MarkerTarget> targets) override;
  bool topic_exists(const std::string& topic) const override;
  awaitable<std::optional<int64_t>> next() override;

 private:
  awaitable<void> create_state_topic(int16_t replication_factor);
  awaitable<void> load_partitions();
  // Replays one partition's records; the number read. A load overtaken by
  // a resignation or a newer election (`generation`) replays nothing.
  awaitable<size_t> load_partition(std::shared_ptr<replication::Partition> part, uint64_t generation);
  // The markers of the partitions `node` leads, as one WriteTxnMarkers.
  awaitable<void> send_to(NodeId node, std::vector<MarkerTarget*> targets);
  void schedule(const char* interval_key, void (TransactionCoordinator::*task)());

  Broker& broker_;
  std::unique_ptr<TransactionCoordinator> coordinator_;
  std::map<int32_t, uint64_t> load_generation_;
  bool creating_ = false;
  asio::steady_timer created_;
};

}  // namespace runnel::broker::transaction
