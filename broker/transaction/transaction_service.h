// The transaction coordinator in place (transaction_coordinator.h):
// __transaction_state, Kafka's internal compacted topic, created like
// Kafka's on the first FindCoordinator for a transactional id; the log the
// coordinator writes through; the load of each partition before its ids are
// served; the marker channel (this broker's partitions through
// marker_writer.h); and the coordinator's two periodic tasks.
//
// A single node coordinates every partition. A cluster does not coordinate
// transactions yet: markers for partitions other brokers lead and the
// election of __transaction_state leaders are still to come, so a cluster's
// FindCoordinator keeps refusing transactional ids.
#pragma once

#include <memory>

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

  // Whether this broker coordinates transactions (a single node).
  bool enabled() const;
  // As GroupService::offsets_topic_ready: creates __transaction_state if
  // needed and waits for it. Whether it exists.
  awaitable<bool> state_topic_ready();
  // DeleteTopics removed __transaction_state: every id is unloaded.
  void state_topic_deleted();
  void start();

  TransactionCoordinator& coordinator() { return *coordinator_; }

  // TxnStateLog, TxnMarkerChannel, ProducerIdSource
  awaitable<ErrorCode> append(int32_t partition, protocol::Bytes key, std::optional<protocol::Bytes> value) override;
  awaitable<void> send(std::span<MarkerTarget> targets) override;
  bool topic_exists(const std::string& topic) const override;
  awaitable<std::optional<int64_t>> next() override;

 private:
  awaitable<void> create_state_topic();
  awaitable<void> load_partitions();
  awaitable<size_t> load_partition(std::shared_ptr<replication::Partition> part);
  void schedule(const char* interval_key, void (TransactionCoordinator::*task)());

  Broker& broker_;
  std::unique_ptr<TransactionCoordinator> coordinator_;
  bool creating_ = false;
  asio::steady_timer created_;
};

}  // namespace runnel::broker::transaction
