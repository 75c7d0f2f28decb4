// Kafka's Partition: one partition this broker hosts, as leader or
// follower. The rules that decide what a client may write and read live
// here, written once:
//
//   - append_records_as_leader: the min.insync.replicas check (acks=all),
//     validation, the idempotent producer's sequence check, the log append,
//     the producer state update, the high watermark advance and the wake-up
//     of waiting fetches and produces;
//   - read / fetch_offset_snapshot / fetch_offset_for_timestamp: the leader
//     epoch fencing of Partition.getLocalLog, and the bound of what a reader
//     sees (the high watermark, or the last stable offset for read_committed).
//
// The high watermark is decided here: the smallest log end offset among the
// ISR (Kafka's maybeIncrementHighWatermark). The log only stores it, since
// retention and the cleaner must not pass it (Kafka's UnifiedLog does the
// same). With one replica it is the log end offset after every append.
// The last stable offset is the first offset of the oldest transaction not
// yet decided and replicated (the producer state's first unstable offset),
// or the high watermark when that is lower or none is. A transaction's
// marker comes from its coordinator (WriteTxnMarkers) as a control batch;
// an aborted transaction is recorded in the log's aborted-transaction index
// (storage/transaction_index.h), which read_committed reads return.
//
// Event-loop state: everything but the log (which locks itself) belongs to
// the broker's loop.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "broker/admin/counters.h"
#include "base/clock.h"
#include "base/ids.h"
#include "broker/delayed_operations.h"
#include "broker/producer_state.h"
#include "protocol/error_codes.h"
#include "protocol/records/control_record.h"
#include "replication/append.h"
#include "storage/log.h"
#include "storage/transaction_index.h"

namespace runnel::replication {

using protocol::ErrorCode;

enum class Role : uint8_t { leader, follower };

// A partition's place in the cluster, as the metadata says (Kafka's
// LeaderAndIsr and the replica assignment).
struct PartitionState {
  NodeId leader = kNoNode;
  LeaderEpoch leader_epoch{0};
  std::vector<NodeId> replicas;
  std::vector<NodeId> isr;

  // A single node's partition: this node leads, alone in the ISR, in the
  // epoch Runnel's single node has always served (0, the epoch its logs
  // start in).
  static PartitionState single_node(NodeId node) { return {node, LeaderEpoch(0), {node}, {node}}; }
};

// Which offset bounds a read (Kafka's FetchIsolation).
enum class FetchIsolation : uint8_t {
  log_end,         // a follower replicating
  high_watermark,  // a consumer, read_uncommitted
  txn_committed,   // a consumer, read_committed: the last stable offset
};

// Kafka's LogOffsetSnapshot.
struct OffsetSnapshot {
  Offset log_start_offset;
  Offset log_end_offset;
  Offset high_watermark;
  Offset last_stable_offset;
};

// (-1, -1) when the epoch is unknown to the cache, as Kafka answers.
struct EpochEndOffset {
  ErrorCode error = ErrorCode::none;
  LeaderEpoch leader_epoch = kNoLeaderEpoch;
  Offset end_offset = kUnknownOffset;
};

// One partition's read (Kafka's LogReadResult).
struct PartitionRead {
  ErrorCode error = ErrorCode::none;
  protocol::FileRegion records;  // whole batches; length 0 when there are none
  // Unset when the epoch check refused the read: nothing about the log is told.
  std::optional<OffsetSnapshot> offsets;
  // A follower's fetch whose last fetched epoch this log does not end the
  // same way: the largest epoch <= it here and that epoch's end offset
  // (Kafka's FetchResponse DivergingEpoch). No records then.
  std::optional<EpochEndOffset> diverging_epoch;
  // read_committed: the aborted transactions the records may hold (Kafka's
  // FetchDataInfo.abortedTransactions), oldest first.
  std::vector<storage::AbortedTxn> aborted_transactions;
};

// Who sent a replica's fetch (Kafka's FetchParams.replicaId/replicaEpoch).
struct ReplicaFetch {
  NodeId replica = kNoNode;
  int64_t broker_epoch = -1;                  // ReplicaState.ReplicaEpoch; -1: not sent (v14 and older)
  std::optional<int64_t> known_broker_epoch;  // the metadata's epoch of that broker, if registered and unfenced
};

// What a follower's append did (Kafka's LogAppendInfo, as far as the
// fetcher needs it).
struct FollowerAppend {
  int32_t batches = 0;
  int64_t bytes = 0;
  Offset last_offset = kUnknownOffset;  // of the last batch appended
};

struct OffsetForTimestamp {
  ErrorCode error = ErrorCode::none;
  std::optional<storage::TimestampAndOffset> found;  // none: offset -1
};

class Partition {
 public:
  // `clock` dates producer state (expiration, snapshots); it must outlive the partition.
  Partition(std::string topic, PartitionId id, std::shared_ptr<storage::Log> log, NodeId local_node,
            const Clock& clock = Clock::system());
  Partition(const Partition&) = delete;
  Partition& operator=(const Partition&) = delete;

  const std::string& topic() const { return topic_; }
  PartitionId id() const { return id_; }
  int32_t index() const { return id_.value(); }
  storage::Log& log() { return *log_; }
  const std::shared_ptr<storage::Log>& log_ptr() const { return log_; }

  // Kafka's BrokerTopicMetrics of this partition, summed per topic at
  // /metrics; each count also goes to `all_topics` (the replica manager's,
  // set when it hosts the partition), as Kafka's allTopicsStats.
  const broker::admin::TopicCounters& counters() const { return counters_; }
  void count_all_topics_in(broker::admin::TopicCounters* all_topics) { all_topics_ = all_topics; }
  // Record bytes a consumer's fetch response carries (not a follower's).
  void count_bytes_out(uint64_t bytes) {
    counters_.count_out(bytes);
    if (all_topics_) all_topics_->count_out(bytes);
  }

  // Kafka's makeLeader / makeFollower: applies the metadata's leader, epoch,
  // replicas and ISR, and forgets the followers' offsets. Returns true when
  // this broker leads. A leader in an epoch newer than any its log has
  // seen records that the epoch starts at the log end offset (Kafka's
  // assignEpochStartOffset), so its appends and a follower's divergence
  // check agree; a single node stays in epoch 0, which opening a new log
  // records already.
  bool become_leader_or_follower(const PartitionState& state);
  Role role() const { return role_; }
  bool is_leader() const { return role_ == Role::leader; }
  NodeId leader_id() const { return state_.leader; }
  LeaderEpoch leader_epoch() const { return state_.leader_epoch; }
  const std::vector<NodeId>& replicas() const { return state_.replicas; }
  const std::vector<NodeId>& isr() const { return state_.isr; }

  Offset high_watermark() const { return Offset(log_->high_watermark()); }
  Offset last_stable_offset() const;
  Offset log_start_offset() const { return Offset(log_->log_start_offset()); }
  Offset log_end_offset() const { return Offset(log_->log_end_offset()); }

  // Kafka's getPartitionOrError, checkCurrentLeaderEpoch and getLocalLog:
  // a partition on an offline log dir is KAFKA_STORAGE_ERROR; an older
  // epoch than ours is FENCED_LEADER_EPOCH, a newer one
  // UNKNOWN_LEADER_EPOCH; no epoch (nullopt) is not checked; a follower
  // asked for the leader's data is NOT_LEADER_OR_FOLLOWER.
  ErrorCode check_local_log(std::optional<LeaderEpoch> current_leader_epoch, bool require_leader) const;

  LeaderAppendResult append_records_as_leader(const LeaderAppendRequest& request);

  // Kafka's checkEnoughReplicasReachOffset, for a waiting acks=all
  // produce: true once the high watermark has reached `required` (the
  // appended last offset + 1), with NOT_ENOUGH_REPLICAS_AFTER_APPEND in
  // `error` if the ISR shrank below `min_insync_replicas` meanwhile; true
  // with NOT_LEADER_OR_FOLLOWER if this broker no longer leads.
  bool enough_replicas_reached(Offset required, int32_t min_insync_replicas, ErrorCode& error) const;

  // Kafka's updateFollowerFetchState: a follower's fetch says its log end
  // offset, which may move the high watermark, and its log start offset
  // (kUnknownOffset: not sent), which may move the low watermark.
  void update_follower_fetch_state(NodeId follower, Offset log_end_offset, Offset log_start_offset);

  // Kafka's lowWatermarkIfLeader, which a DeleteRecords waits for
  // (replication/delayed_delete_records.h): the smallest log start offset
  // of this log and of every other replica whose broker `is_live` says is
  // registered and unfenced. A live follower not heard from since this
  // broker became leader counts as kUnknownOffset, as Kafka's unknown
  // ReplicaState does, and holds it there until it fetches. A dead one
  // does not count: it catches up from the leader's log start when it
  // returns. kUnknownOffset when this broker does not lead.
  Offset low_watermark_if_leader(const std::function<bool(NodeId)>& is_live) const;

  // The ISR rules a leader applies (broker/alter_partition_manager.h):
  // Kafka's getOutOfSyncReplicas -- ISR members, this broker aside, not
  // caught up with the leader's log end within `lag_ms` -- and
  // isFollowerInSync -- a follower whose log end has reached the high
  // watermark and the start of the current leader epoch may join.
  bool in_isr(NodeId node) const;
  std::vector<NodeId> out_of_sync_replicas(int64_t now_ms, int64_t lag_ms) const;
  bool is_caught_up_for_isr(NodeId follower) const;

  // The leader's side of a replica's fetch (Kafka's Partition.fetchRecords
  // for a follower): this broker must lead in `current_leader_epoch` (when
  // given); the replica must be assigned (else UNKNOWN_LEADER_EPOCH when
  // the request names an epoch, NOT_LEADER_OR_FOLLOWER when not); with a
  // `last_fetched_epoch`, a log that does not end that epoch where the
  // follower does answers diverging_epoch and no records; otherwise the
  // read goes to the log end offset. With `update_fetch_state` the fetch
  // offset is taken as the follower's log end offset, unless its broker
  // epoch is older than the metadata's (NOT_LEADER_OR_FOLLOWER: a fetch
  // from before the broker restarted).
  // The replica's log start offset (`log_start_offset`, kUnknownOffset if
  // not sent) is kept with its fetch state.
  PartitionRead fetch_records_for_follower(const ReplicaFetch& replica, Offset fetch_offset, Offset log_start_offset,
                                           std::optional<LeaderEpoch> last_fetched_epoch, int64_t max_bytes,
                                           std::optional<LeaderEpoch> current_leader_epoch, bool min_one_batch,
                                           bool update_fetch_state);
  bool is_replica(NodeId node) const;

  // The follower's side (Kafka's appendRecordsToFollowerOrFutureReplica):
  // whole batches as the leader stored them (a partial batch at the end of
  // a fetch is left for the next one), the idempotent producers' state
  // updated from them, a producer snapshot where the log rolled.
  storage::Result<FollowerAppend> append_records_as_follower(std::span<const uint8_t> records);
  // Kafka's maybeUpdateHighWatermark on a follower: min(the leader's high
  // watermark, this log end offset); wakes waiting fetches when it moves.
  void update_follower_high_watermark(Offset leader_high_watermark);
  // The leader's log start offset, adopted (bounded by the high watermark,
  // as Kafka's maybeIncrementLogStartOffset is).
  std::error_code maybe_increment_log_start_offset(Offset leader_log_start_offset);
  // A follower's truncations (divergence, out of range); the producer
  // state is reloaded for what the log still holds, as Kafka's truncateTo
  // reloads it.
  std::error_code truncate_to(Offset offset);
  std::error_code truncate_fully_and_start_at(Offset offset);

  PartitionRead read(Offset fetch_offset, int64_t max_bytes, FetchIsolation isolation,
                     std::optional<LeaderEpoch> current_leader_epoch, bool min_one_batch);
  // Kafka's fetchOffsetSnapshot, unfenced (DescribeLogDirs, Metadata).
  OffsetSnapshot offset_snapshot() const;
  // ListOffsets (Kafka's fetchOffsetForTimestamp), fenced as a read is:
  // -1 (latest) is the last fetchable offset, -2 and -4 the log start, -5
  // none; a timestamp's match must lie below the last fetchable offset.
  OffsetForTimestamp fetch_offset_for_timestamp(int64_t timestamp, FetchIsolation isolation,
                                                std::optional<LeaderEpoch> current_leader_epoch, bool require_leader);
  // OffsetForLeaderEpoch (Kafka's lastOffsetForLeaderEpoch), fenced.
  EpochEndOffset last_offset_for_leader_epoch(std::optional<LeaderEpoch> current_leader_epoch,
                                              LeaderEpoch leader_epoch, bool require_leader) const;

  // The delayed operations waiting on this partition (Kafka's purgatory
  // keys): fetches wait for data, acks=all produces for the high
  // watermark, DeleteRecords for the low watermark.
  broker::WatchList& fetch_watchers() { return fetch_watchers_; }
  broker::WatchList& produce_watchers() { return produce_watchers_; }
  broker::WatchList& delete_records_watchers() { return delete_records_watchers_; }
  // After the log changed under waiting fetches (a deletion, retention).
  void wake_fetches() { fetch_watchers_.check_and_complete(); }
  // Kafka's tryCompleteDelayedRequests: every operation waiting here looks
  // again (leadership moved, the partition went away).
  void try_complete_delayed_requests();

  broker::ProducerStateTable& producers() { return producers_; }
  const broker::ProducerStateTable& producers() const { return producers_; }
  // Drops producers idle for producer.id.expiration.ms; the broker calls it
  // every producer.id.expiration.check.interval.ms, as Kafka does.
  void expire_producers(int64_t now_ms) { producers_.expire(now_ms, producer_expiration_ms_); }
  // Loads the idempotent producers' state the way Kafka's LogLoader does:
  // the latest valid snapshot (corrupt ones are deleted), then the log
  // after it; without a snapshot, the whole log. Producers idle for
  // `expiration_ms` (producer.id.expiration.ms) are left out. From then on
  // the partition writes a snapshot wherever an append rolls the log.
  std::error_code load_producer_state(int64_t now_ms, int64_t expiration_ms);
  // Before a clean close (Kafka's UnifiedLog.close): a snapshot at the log
  // end offset spares the next start any replay; none when one is there
  // already, the log is empty or its dir is offline.
  std::error_code snapshot_producers_before_close();

 private:
  // Kafka's maybeIncrementHighWatermark: the smallest log end offset in the
  // ISR. Wakes every waiting operation when it moves.
  bool maybe_increment_high_watermark();
  Offset last_fetchable_offset(FetchIsolation isolation) const;
  // Replays the producer state over [from, to); with `index_from` >= 0
  // (Log::txn_index_rebuild_from) aborted transactions are re-recorded in
  // the indexes the log did not trust (the log skips those below it).
  std::error_code replay_producers(int64_t from, int64_t to, int64_t index_from);
  // How an aborted transaction reaches the log's index: appended (a new
  // marker), re-recorded where the log did not trust its index (replay), or
  // not at all (replay of what the index already holds).
  enum class TxnIndexWrite : uint8_t { none, append, rebuild };
  // A marker appended at `offset`, from any origin: the producer's
  // transaction ends, and if aborted is recorded in the index as `index` says.
  std::error_code apply_marker(const protocol::records::BatchHeader& header,
                               const protocol::records::EndTxnMarker& marker, int64_t offset, int64_t timestamp,
                               TxnIndexWrite index);
  // The high watermark moved: completed transactions below it are stable.
  void on_high_watermark_moved() {
    producers_.on_high_watermark_updated(log_->high_watermark());
    publish_first_unstable();
  }
  // Tells the log where compaction must stop (Log::set_first_unstable_offset)
  // after anything that opens, decides or forgets a transaction.
  void publish_first_unstable() { log_->set_first_unstable_offset(producers_.first_unstable_offset().value_or(-1)); }
  std::error_code write_producer_snapshot(int64_t offset);

  std::string topic_;
  PartitionId id_;
  broker::admin::TopicCounters counters_;
  broker::admin::TopicCounters* all_topics_ = nullptr;
  std::shared_ptr<storage::Log> log_;
  NodeId local_node_;
  const Clock& clock_;
  Role role_ = Role::follower;
  PartitionState state_;
  // Kafka's ReplicaState for each follower, as its fetches report it: its
  // log end and log start offsets, and when it last was caught up with the
  // leader (the ISR's lag rule: replica.lag.time.max.ms).
  struct FollowerState {
    Offset log_end = kUnknownOffset;
    Offset log_start = kUnknownOffset;
    int64_t last_caught_up_ms = 0;
    Offset last_fetch_leader_log_end{0};
    int64_t last_fetch_ms = 0;
  };
  std::map<NodeId, FollowerState> followers_;
  broker::WatchList fetch_watchers_;
  broker::WatchList produce_watchers_;
  broker::WatchList delete_records_watchers_;
  broker::ProducerStateTable producers_;
  int64_t producer_expiration_ms_ = 86'400'000;
  // Whether the log's untrusted aborted-transaction indexes were rebuilt
  // (once, by the first producer-state load).
  bool txn_index_rebuilt_ = false;
};

}  // namespace runnel::replication
