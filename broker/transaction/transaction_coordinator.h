// The transaction coordinator, as Kafka 4.1's TransactionCoordinator with its
// TransactionStateManager and TransactionMarkerChannelManager: the metadata of
// every transactional id of the __transaction_state partitions this broker
// coordinates, the requests that change it (InitProducerId, AddPartitionsToTxn,
// AddOffsetsToTxn, EndTxn), the markers that end a transaction, the abort of
// transactions open past their timeout and the expiry of idle ids.
//
// Every change is written to __transaction_state (TxnStateLog) before it takes
// effect (transaction_metadata.h's prepare / complete steps); while a write or
// the markers of an ending transaction are in flight the id has a pending
// state, and requests for it answer CONCURRENT_TRANSACTIONS. After each wait
// the coordinator looks the id up again and checks the partition's coordinator
// epoch: an unload or a new election meanwhile answers NOT_COORDINATOR and
// applies nothing.
//
// In a cluster a broker owns the partitions it leads (TransactionService::
// leadership_changed), and ids of the others answer NOT_COORDINATOR.
//
// Speaks the transaction protocol of each transaction's client: TV_0 and
// TV_1 (clients add partitions with AddPartitionsToTxn, EndTxn keeps the
// epoch) and TV_2 (KIP-890 part 2: partition leaders add them for Produce
// v12 and TxnOffsetCommit v5, and every EndTxn v5 bumps the epoch, so a late
// write of an ended transaction is fenced). `level` is the cluster's
// finalized transaction.version, which decides the log's value version.
//
// The I/O is behind three interfaces so the unit tests drive it in memory:
// the log, the marker channel and the producer id source.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "broker/asio.h"
#include "broker/transaction/marker_writer.h"
#include "broker/transaction/transaction_metadata.h"
#include "protocol/codec/types.h"

namespace runnel::broker::transaction {

using protocol::ErrorCode;

struct CoordinatorConfig {
  int32_t state_partitions = 50;            // transaction.state.log.num.partitions
  int32_t max_timeout_ms = 900000;          // transaction.max.timeout.ms
  int64_t id_expiration_ms = 604800000;     // transactional.id.expiration.ms
  TransactionVersion level = TransactionVersion::tv0;  // the finalized transaction.version
  int64_t marker_retry_backoff_ms = 100;    // between rounds of markers that must be retried
};

// __transaction_state: appends one record with acks=all; Kafka's produce error.
// `sync` false: a record whose loss only repeats work (CompleteCommit,
// CompleteAbort: a load that finds the PrepareX before it sends the markers
// again and completes it), so it needs no fsync of its own; the next
// record written to the partition, fsynced, makes it durable too.
class TxnStateLog {
 public:
  virtual ~TxnStateLog() = default;
  virtual awaitable<ErrorCode> append(int32_t partition, protocol::Bytes key, std::optional<protocol::Bytes> value,
                                      bool sync) = 0;
};

// Where markers go: each target's leader, this broker's own partitions included.
class TxnMarkerChannel {
 public:
  virtual ~TxnMarkerChannel() = default;
  // Fills in each target's error.
  virtual awaitable<void> send(std::span<MarkerTarget> targets) = 0;
  // A deleted topic's partitions need no marker (Kafka drops them).
  virtual bool topic_exists(const std::string& topic) const = 0;
};

class ProducerIdSource {
 public:
  virtual ~ProducerIdSource() = default;
  virtual awaitable<std::optional<int64_t>> next() = 0;
};

struct ProducerIdAndEpoch {
  int64_t producer_id = kNoProducerId;
  int16_t epoch = kNoProducerEpoch;
};

struct InitProducerIdResult {
  ErrorCode error = ErrorCode::none;
  int64_t producer_id = kNoProducerId;
  int16_t producer_epoch = kNoProducerEpoch;
};

class TransactionCoordinator {
 public:
  TransactionCoordinator(asio::any_io_executor ex, CoordinatorConfig config, TxnStateLog& log,
                         TxnMarkerChannel& markers, ProducerIdSource& ids, const Clock& clock);

  const CoordinatorConfig& config() const { return config_; }
  void set_state_partitions(int32_t partitions) { config_.state_partitions = partitions; }
  int32_t partition_for(const std::string& transactional_id) const;

  // Ownership of a __transaction_state partition, from its election (with
  // the leader epoch as the coordinator epoch) through loading to its
  // resignation. Loading answers COORDINATOR_LOAD_IN_PROGRESS; records are
  // replayed in log order; end_loading resumes the markers of transactions
  // found in PrepareCommit or PrepareAbort.
  void begin_loading(int32_t partition, int32_t coordinator_epoch);
  // false for a record that is not one (logged and skipped by the caller).
  bool replay(int32_t partition, protocol::ByteView key, std::optional<protocol::ByteView> value);
  void end_loading(int32_t partition);
  void unload_partition(int32_t partition);
  bool owns(int32_t partition) const { return partitions_.contains(partition); }
  // The epoch an owned partition is coordinated at; nullopt when not owned.
  std::optional<int32_t> coordinator_epoch(int32_t partition) const;
  bool is_loading(int32_t partition) const;

  awaitable<InitProducerIdResult> init_producer_id(std::string transactional_id, int32_t txn_timeout_ms,
                                                   std::optional<ProducerIdAndEpoch> expected);
  // AddPartitionsToTxn (and AddOffsetsToTxn with the group's offsets
  // partition): one error for all the partitions. `client_version` TV_2 is
  // a partition leader adding a Produce v12's or a TxnOffsetCommit v5's
  // partition for the client (KIP-890 part 2); the transaction keeps it.
  awaitable<ErrorCode> add_partitions(std::string transactional_id, int64_t producer_id, int16_t producer_epoch,
                                      std::set<TopicPartition> partitions,
                                      TransactionVersion client_version = TransactionVersion::tv0);
  // AddPartitionsToTxn v4+ verify_only, and a partition leader checking a
  // transactional Produce: the error per partition (TRANSACTION_ABORTABLE
  // for one not in the transaction), or one error for all.
  struct Verification {
    ErrorCode error = ErrorCode::none;
    std::map<TopicPartition, ErrorCode> partitions;
  };
  Verification verify_partitions(const std::string& transactional_id, int64_t producer_id, int16_t producer_epoch,
                                 const std::set<TopicPartition>& partitions) const;
  // EndTxn. Under TV_2 (EndTxn v5) every end bumps the producer epoch, and
  // the answer names the producer id and epoch the client goes on with.
  struct EndTxnResult {
    ErrorCode error = ErrorCode::none;
    int64_t producer_id = kNoProducerId;
    int16_t producer_epoch = kNoProducerEpoch;
  };
  awaitable<EndTxnResult> end_transaction(std::string transactional_id, int64_t producer_id, int16_t producer_epoch,
                                          bool commit, TransactionVersion client_version = TransactionVersion::tv0);

  // transaction.abort.timed.out.transaction.cleanup.interval.ms: fences and
  // aborts every transaction open longer than its timeout.
  void abort_timed_out_transactions();
  // transaction.remove.expired.transaction.cleanup.interval.ms: writes the
  // tombstone of every id idle longer than transactional.id.expiration.ms.
  void remove_expired_transactional_ids();

  // DescribeTransactions and ListTransactions; COORDINATOR errors as for requests.
  struct Lookup {
    ErrorCode error = ErrorCode::none;
    const TransactionMetadata* metadata = nullptr;
  };
  Lookup find(const std::string& transactional_id) const;
  // Every id of every loaded partition; NOT_COORDINATOR-free: loading
  // partitions are skipped and reported in `loading`.
  std::vector<const TransactionMetadata*> all(bool& loading) const;

 private:
  struct StatePartition {
    bool loading = true;
    int32_t coordinator_epoch = 0;
    std::map<std::string, std::shared_ptr<TransactionMetadata>> txns;
  };
  struct Found {
    ErrorCode error = ErrorCode::none;
    int32_t coordinator_epoch = 0;
    std::shared_ptr<TransactionMetadata> metadata;  // null: no such id
  };
  Found get(const std::string& transactional_id) const;
  // The same metadata object, still at that coordinator epoch; else null.
  std::shared_ptr<TransactionMetadata> still(const std::string& transactional_id, int32_t coordinator_epoch,
                                             const std::shared_ptr<TransactionMetadata>& md) const;

  // Writes a transit and, once written, applies it. `keep_pending_on_retry`:
  // a COORDINATOR_NOT_AVAILABLE leaves the pending state for the caller's
  // retry (the completion after the markers).
  awaitable<ErrorCode> append_transit(std::string transactional_id, int32_t coordinator_epoch,
                                      std::shared_ptr<TransactionMetadata> md, TxnTransitMetadata transit,
                                      bool keep_pending_on_retry = false);
  // endTransaction: the client's EndTxn (`from_client`) or the
  // coordinator's own abort (a fence by InitProducerId, a timeout) in the
  // transaction's client version.
  awaitable<EndTxnResult> end_transaction_impl(std::string transactional_id, int64_t producer_id,
                                               int16_t producer_epoch, bool commit, bool from_client,
                                               TransactionVersion client_version);
  awaitable<EndTxnResult> end_transaction_tv1(std::string transactional_id, int64_t producer_id,
                                              int16_t producer_epoch, bool commit, bool from_client);
  awaitable<EndTxnResult> end_transaction_tv2(std::string transactional_id, int64_t producer_id,
                                              int16_t producer_epoch, bool commit, bool from_client);
  // The abort of a transaction whose producer `fence` fenced (InitProducerId, a timeout).
  awaitable<EndTxnResult> abort_fenced(std::string transactional_id, std::shared_ptr<TransactionMetadata> md,
                                       TxnTransitMetadata fence);
  // An epoch fence's pending bump, taken by the abort that carries it.
  static void take_fence_bump(TransactionMetadata& md, int16_t producer_epoch);
  // Writes an EndTxn's Prepare* transit, then prepared_then_markers.
  awaitable<EndTxnResult> write_prepared(std::string transactional_id, int32_t coordinator_epoch,
                                         std::shared_ptr<TransactionMetadata> md, TxnTransitMetadata prepared,
                                         bool commit, bool epoch_fence);
  // After a Prepare* is written: answers the client, sends the markers.
  awaitable<EndTxnResult> prepared_then_markers(const std::string& transactional_id, int32_t coordinator_epoch,
                                                std::shared_ptr<TransactionMetadata> md, bool commit);
  // The markers of a transaction in PrepareCommit/PrepareAbort whose
  // completion is prepared (`complete`), then the completion's write.
  void send_markers(std::string transactional_id, int32_t coordinator_epoch, std::shared_ptr<TransactionMetadata> md,
                    std::set<TopicPartition> partitions, bool commit, TxnTransitMetadata complete);
  awaitable<void> markers_then_complete(std::string transactional_id, int32_t coordinator_epoch,
                                        std::shared_ptr<TransactionMetadata> md, std::set<TopicPartition> partitions,
                                        bool commit, TxnTransitMetadata complete);
  awaitable<void> expire(std::string transactional_id, int32_t coordinator_epoch,
                         std::shared_ptr<TransactionMetadata> md, TxnTransitMetadata dead);
  awaitable<void> abort_timed_out(std::string transactional_id, int32_t coordinator_epoch,
                                  std::shared_ptr<TransactionMetadata> md, TxnTransitMetadata fence);
  awaitable<void> pause(int64_t ms);

  asio::any_io_executor ex_;
  CoordinatorConfig config_;
  TxnStateLog& log_;
  TxnMarkerChannel& markers_;
  ProducerIdSource& ids_;
  const Clock& clock_;
  std::map<int32_t, StatePartition> partitions_;
};

}  // namespace runnel::broker::transaction
