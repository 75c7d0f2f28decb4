#include "replication/partition.h"

#include <unistd.h>

#include <algorithm>

#include "broker/logging.h"
#include "protocol/records/batch_reader.h"

namespace runnel::replication {

namespace {

ErrorCode read_error(std::error_code ec) {
  if (ec == storage::StorageErrc::offset_out_of_range) return ErrorCode::offset_out_of_range;
  // A closed log belongs to a partition deleted while a fetch waited.
  if (ec == storage::StorageErrc::closed) return ErrorCode::unknown_topic_or_partition;
  return ErrorCode::kafka_storage_error;
}

}  // namespace

Partition::Partition(std::string topic, PartitionId id, std::shared_ptr<storage::Log> log, NodeId local_node,
                     const Clock& clock)
    : topic_(std::move(topic)), id_(id), log_(std::move(log)), local_node_(local_node), clock_(clock) {
  // Nothing is cleanable until load_producer_state knows the open transactions.
  log_->set_first_unstable_offset(log_->log_start_offset());
  producers_.mirror_to(&log_->active_producers());
}

bool Partition::become_leader_or_follower(const PartitionState& state) {
  const bool new_leader_epoch = state.leader != state_.leader || state.leader_epoch != state_.leader_epoch;
  state_ = state;
  role_ = state.leader == local_node_ ? Role::leader : Role::follower;
  // Kafka's makeLeader resets what it knew of the followers at a new leader
  // epoch: they must fetch again before they count toward the high
  // watermark; ISR members count as caught up from now, the others not.
  // An ISR change at the same epoch keeps it.
  if (new_leader_epoch) {
    followers_.clear();
    const int64_t now = clock_.wall_ms();
    for (NodeId r : state_.isr)
      if (r != local_node_) followers_[r].last_caught_up_ms = now;
  }
  if (is_leader()) {
    // Kafka's makeLeader: a new leader epoch starts at the log end offset.
    const auto latest = log_->latest_epoch();
    if (!latest || state.leader_epoch.value() > *latest)
      if (auto ec = log_->assign_leader_epoch(state.leader_epoch.value(), log_->log_end_offset()))
        RLOG_ERROR("%s-%d: recording leader epoch %d: %s", topic_.c_str(), index(), state.leader_epoch.value(),
                   ec.message().c_str());
    maybe_increment_high_watermark();
  }
  return is_leader();
}

bool Partition::is_replica(NodeId node) const {
  return std::find(state_.replicas.begin(), state_.replicas.end(), node) != state_.replicas.end();
}

ErrorCode Partition::check_local_log(std::optional<LeaderEpoch> current_leader_epoch, bool require_leader) const {
  // Kafka's HostedPartition.Offline: a replica on a failed log dir answers
  // nothing else.
  if (log_->dir_offline()) return ErrorCode::kafka_storage_error;
  if (current_leader_epoch) {
    if (*current_leader_epoch < leader_epoch()) return ErrorCode::fenced_leader_epoch;
    if (*current_leader_epoch > leader_epoch()) return ErrorCode::unknown_leader_epoch;
  }
  if (require_leader && !is_leader()) return ErrorCode::not_leader_or_follower;
  return ErrorCode::none;
}

LeaderAppendResult Partition::append_records_as_leader(const LeaderAppendRequest& request) {
  LeaderAppendResult out;
  if (!is_leader()) {
    out.status = {ErrorCode::not_leader_or_follower, {}, {}};
    return out;
  }
  const auto isr_size = static_cast<int32_t>(isr().size());
  if (request.required_acks == -1 && isr_size < request.min_insync_replicas) {
    out.status = {ErrorCode::not_enough_replicas,
                  "The size of the current ISR " + std::to_string(isr_size) +
                      " is insufficient to satisfy the min.isr requirement of " +
                      std::to_string(request.min_insync_replicas),
                  {}};
    return out;
  }
  PreparedBatch batch = request.validate();
  if (!batch.status.ok()) {
    RLOG_DEBUG("produce to %s-%d refused: %s", topic_.c_str(), index(), batch.status.message.c_str());
    out.status = std::move(batch.status);
    if (batch.reports_log_start) out.log_start_offset = log_start_offset();
    return out;
  }
  const auto& header = batch.header;
  // A transaction marker (only a coordinator's append builds one; clients'
  // control batches were refused by validation).
  std::optional<protocol::records::EndTxnMarker> marker;
  if (header.is_control()) {
    marker = protocol::records::read_end_txn_marker(batch.bytes, header);
    const ErrorCode e = marker ? producers_.check_marker(header.producer_id, header.producer_epoch, *marker,
                                                         request.transaction_version)
                               : ErrorCode::invalid_record;
    if (e != ErrorCode::none) {
      out.status = {e, {}, {}};
      return out;
    }
  } else if (header.producer_id >= 0) {
    broker::SequenceCheck check = producers_.check(header, request.origin == AppendOrigin::client);
    if (check.error == ErrorCode::none && !check.duplicate_of && request.verify_transactions &&
        header.is_transactional() &&
        !producers_.has_ongoing_txn(header.producer_id, header.producer_epoch) &&
        !producers_.verified(header.producer_id, request.verification_guard)) {
      RLOG_DEBUG("produce to %s-%d refused: producer %lld's transactional batch was not verified", topic_.c_str(),
                 index(), static_cast<long long>(header.producer_id));
      check.error = ErrorCode::invalid_txn_state;
    }
    if (check.error != ErrorCode::none) {
      // The log refused it: Kafka reports the log start offset.
      out.status = {check.error, {}, {}};
      out.log_start_offset = log_start_offset();
      return out;
    }
    if (check.duplicate_of) {
      // Already appended: acknowledged with the original offsets, nothing appended.
      out.duplicate = true;
      out.base_offset = Offset(check.duplicate_of->first_offset);
      out.last_offset = Offset(check.duplicate_of->last_offset);
      if (request.log_append_time) out.log_append_time_ms = check.duplicate_of->timestamp;
      out.log_start_offset = log_start_offset();
      return out;
    }
  }
  auto info = log_->append(batch.bytes, leader_epoch().value());
  if (!info && info.error() == storage::StorageErrc::record_batch_too_large) {
    // The client's fault, not the disk's: Kafka's RecordBatchTooLargeException
    // (records larger than segment.bytes), which producers do not retry.
    // KAFKA_STORAGE_ERROR, retriable, had librdkafka resend them until
    // message.timeout.ms, holding back every later record of the partition.
    RLOG_DEBUG("produce to %s-%d refused: %zu bytes exceed segment.bytes", topic_.c_str(), index(),
               batch.bytes.size());
    out.status = {ErrorCode::record_list_too_large, {}, {}};
    return out;
  }
  if (!info) {
    // The failure that takes the dir offline is an error; the refusals after
    // it (a producer retrying) were reported by it.
    if (info.error() == storage::StorageErrc::log_dir_failed)
      RLOG_DEBUG("append to %s-%d refused: %s", topic_.c_str(), index(), info.error().message().c_str());
    else
      RLOG_ERROR("append to %s-%d failed: %s", topic_.c_str(), index(), info.error().message().c_str());
    out.status = {ErrorCode::kafka_storage_error, {}, {}};
    return out;
  }
  // The state as of the new segment's base offset, this batch not yet in
  // it: a restart loads it and replays only the segment. A failed write
  // costs a longer replay at the next start, not the acknowledged batch.
  if (info->rolled_at >= 0)
    if (auto ec = write_producer_snapshot(info->rolled_at))
      RLOG_WARN("%s-%d: producer snapshot at offset %lld: %s", topic_.c_str(), index(),
                static_cast<long long>(info->rolled_at), ec.message().c_str());
  const int64_t timestamp = info->log_append_time_ms >= 0 ? info->log_append_time_ms : header.max_timestamp;
  if (marker) {
    if (auto ec = apply_marker(header, *marker, info->base_offset, timestamp, TxnIndexWrite::append)) {
      // The marker is in the log, its index entry not: the log dir has failed.
      RLOG_ERROR("%s-%d: aborted-transaction index: %s", topic_.c_str(), index(), ec.message().c_str());
      out.status = {ErrorCode::kafka_storage_error, {}, {}};
      return out;
    }
  } else if (header.producer_id >= 0) {
    producers_.update(header, info->base_offset, timestamp);
    publish_first_unstable();
  }
  out.base_offset = Offset(info->base_offset);
  out.last_offset = Offset(info->last_offset);
  out.log_append_time_ms = info->log_append_time_ms;
  // Kafka's appendToLocalLog: MessagesIn and BytesIn of every appended batch.
  const auto records = static_cast<uint64_t>(std::max<int32_t>(0, header.records_count));
  counters_.count_in(records, batch.bytes.size());
  if (all_topics_) all_topics_->count_in(records, batch.bytes.size());
  out.log_start_offset = Offset(info->log_start_offset);
  // Kafka: a moved high watermark wakes produces and fetches; otherwise the
  // new log end may still complete a follower's fetch.
  if (!maybe_increment_high_watermark()) fetch_watchers_.check_and_complete();
  return out;
}

bool Partition::maybe_increment_high_watermark() {
  if (!is_leader()) return false;
  Offset candidate = log_end_offset();
  for (NodeId replica : isr()) {
    if (replica == local_node_) continue;
    auto it = followers_.find(replica);
    // A follower not heard from since this broker became leader holds it back.
    Offset follower = it == followers_.end() ? kUnknownOffset : it->second.log_end;
    candidate = std::min(candidate, follower);
  }
  if (!log_->maybe_increment_high_watermark(candidate.value())) return false;
  on_high_watermark_moved();
  try_complete_delayed_requests();
  return true;
}

void Partition::update_follower_fetch_state(NodeId follower, Offset log_end_offset, Offset log_start_offset) {
  // Kafka's Replica.updateFetchStateOrThrow: caught up now if it fetched
  // from the leader's log end; caught up at its previous fetch if it has
  // reached where the leader's log ended then.
  FollowerState& f = followers_[follower];
  const int64_t now = clock_.wall_ms();
  const Offset leader_end(log_->log_end_offset());  // the parameter hides log_end_offset()
  if (log_end_offset >= leader_end) f.last_caught_up_ms = std::max(f.last_caught_up_ms, now);
  else if (log_end_offset >= f.last_fetch_leader_log_end) f.last_caught_up_ms = std::max(f.last_caught_up_ms, f.last_fetch_ms);
  f.log_end = log_end_offset;
  f.last_fetch_leader_log_end = leader_end;
  f.last_fetch_ms = now;
  // A follower's log start moving is all a fetch can do to the low
  // watermark (Kafka compares it before and after; the liveness of the
  // other replicas is the waiting DeleteRecords' to ask).
  const bool log_start_moved = log_start_offset > f.log_start;
  f.log_start = log_start_offset;
  if (!maybe_increment_high_watermark() && log_start_moved) delete_records_watchers_.check_and_complete();
}

Offset Partition::low_watermark_if_leader(const std::function<bool(NodeId)>& is_live) const {
  if (!is_leader()) return kUnknownOffset;
  Offset low = log_start_offset();
  for (NodeId replica : state_.replicas) {
    if (replica == local_node_ || !is_live(replica)) continue;
    auto it = followers_.find(replica);
    low = std::min(low, it == followers_.end() ? kUnknownOffset : it->second.log_start);
  }
  return low;
}

void Partition::try_complete_delayed_requests() {
  fetch_watchers_.check_and_complete();
  produce_watchers_.check_and_complete();
  delete_records_watchers_.check_and_complete();
}

bool Partition::in_isr(NodeId node) const {
  return std::find(state_.isr.begin(), state_.isr.end(), node) != state_.isr.end();
}

std::vector<NodeId> Partition::out_of_sync_replicas(int64_t now_ms, int64_t lag_ms) const {
  std::vector<NodeId> out;
  if (!is_leader()) return out;
  for (NodeId r : state_.isr) {
    if (r == local_node_) continue;
    auto it = followers_.find(r);
    const int64_t caught_up = it == followers_.end() ? 0 : it->second.last_caught_up_ms;
    if (now_ms - caught_up > lag_ms) out.push_back(r);
  }
  return out;
}

bool Partition::is_caught_up_for_isr(NodeId follower) const {
  auto it = followers_.find(follower);
  if (!is_leader() || it == followers_.end() || it->second.log_end == kUnknownOffset) return false;
  const Offset end = it->second.log_end;
  // Kafka's leaderEpochStartOffsetOpt: where this leader's epoch began.
  int64_t epoch_start = 0;
  for (const auto& e : log_->leader_epochs())
    if (e.epoch == state_.leader_epoch.value()) epoch_start = e.start_offset;
  return end >= high_watermark() && end.value() >= epoch_start;
}

PartitionRead Partition::fetch_records_for_follower(const ReplicaFetch& replica, Offset fetch_offset,
                                                    Offset log_start_offset,
                                                    std::optional<LeaderEpoch> last_fetched_epoch, int64_t max_bytes,
                                                    std::optional<LeaderEpoch> current_leader_epoch,
                                                    bool min_one_batch, bool update_fetch_state) {
  PartitionRead out;
  out.error = check_local_log(current_leader_epoch, /*require_leader=*/true);
  if (out.error != ErrorCode::none) return out;
  if (!is_replica(replica.replica)) {
    // Kafka's followerReplicaOrThrow: with an epoch that matches ours, the
    // replica may just not be known here yet (retry); without one, nothing
    // better to say.
    out.error = current_leader_epoch ? ErrorCode::unknown_leader_epoch : ErrorCode::not_leader_or_follower;
    return out;
  }
  // The offsets before the read (Kafka's readRecords): appends after it
  // cannot keep a follower from catching up.
  const OffsetSnapshot offsets = offset_snapshot();
  auto fail = [&out](ErrorCode error) {
    out.error = error;
    out.records = {};
    return out;
  };
  if (last_fetched_epoch) {
    EpochEndOffset end = last_offset_for_leader_epoch(current_leader_epoch, *last_fetched_epoch, false);
    if (end.error != ErrorCode::none) return fail(end.error);
    if (end.end_offset == kUnknownOffset || end.leader_epoch == kNoLeaderEpoch) return fail(ErrorCode::offset_out_of_range);
    if (fetch_offset < offsets.log_start_offset) return fail(ErrorCode::offset_out_of_range);
    if (end.leader_epoch < *last_fetched_epoch || end.end_offset < fetch_offset) {
      out.offsets = offsets;
      out.diverging_epoch = end;
      // No fetch state update: the follower truncates first.
      return out;
    }
  }
  auto read = log_->read(fetch_offset.value(), max_bytes, offsets.log_end_offset.value(), min_one_batch);
  if (!read) return fail(read_error(read.error()));
  if (update_fetch_state) {
    // Kafka's Replica.updateFetchStateOrThrow: a fetch from an older
    // incarnation of the broker is fenced.
    if (replica.broker_epoch != -1 && replica.known_broker_epoch && *replica.known_broker_epoch > replica.broker_epoch)
      return fail(ErrorCode::not_leader_or_follower);
    update_follower_fetch_state(replica.replica, fetch_offset, log_start_offset);
  }
  out.offsets = offsets;
  out.records = read->records;
  return out;
}

storage::Result<FollowerAppend> Partition::append_records_as_follower(std::span<const uint8_t> records) {
  namespace rec = protocol::records;
  FollowerAppend out;
  size_t at = 0;
  while (records.size() - at >= rec::kLogOverhead) {
    const protocol::ByteView rest = records.subspan(at);
    auto h = rec::read_batch_header(rest);
    // A batch cut short at the end of the fetch: the next fetch starts at it.
    if (!h || h->batch_length < 0 || h->total_size() > rest.size()) break;
    // Kafka's UnexpectedAppendOffsetException case: an empty log started
    // inside the leader's first batch (a log start offset the leader moved
    // into the middle of a batch) starts over at that batch's base; the
    // leader's log start offset is adopted after the append.
    const int64_t end = log_end_offset().value();
    if (out.batches == 0 && end == log_start_offset().value() && h->base_offset < end && h->last_offset() >= end)
      if (auto ec = truncate_fully_and_start_at(Offset(h->base_offset))) return ec;
    // One batch at a time, so a roll between two of them gets its producer
    // snapshot as of the new segment's base, as on the leader.
    auto info = log_->append_as_follower(rest.first(h->total_size()));
    if (!info) return info.error();
    if (info->rolled_at >= 0)
      if (auto ec = write_producer_snapshot(info->rolled_at))
        RLOG_WARN("%s-%d: producer snapshot at offset %lld: %s", topic_.c_str(), index(),
                  static_cast<long long>(info->rolled_at), ec.message().c_str());
    // Kafka's follower append (AppendOrigin.REPLICATION): the leader has
    // checked the sequences; the follower records them, so an idempotent
    // producer is still known here after a failover.
    if (h->is_control()) {
      if (auto marker = protocol::records::read_end_txn_marker(rest.first(h->total_size()), *h))
        if (auto ec = apply_marker(*h, *marker, h->base_offset, h->max_timestamp, TxnIndexWrite::append)) return ec;
    } else if (h->producer_id >= 0) {
      producers_.update(*h, h->base_offset, h->max_timestamp);
      publish_first_unstable();
    }
    ++out.batches;
    out.bytes += static_cast<int64_t>(h->total_size());
    out.last_offset = Offset(info->last_offset);
    at += h->total_size();
  }
  if (out.batches > 0) fetch_watchers_.check_and_complete();
  return out;
}

void Partition::update_follower_high_watermark(Offset leader_high_watermark) {
  if (log_->maybe_increment_high_watermark(std::min(leader_high_watermark, log_end_offset()).value())) {
    on_high_watermark_moved();
    fetch_watchers_.check_and_complete();
  }
}

std::error_code Partition::maybe_increment_log_start_offset(Offset leader_log_start_offset) {
  const Offset target = std::min(leader_log_start_offset, high_watermark());
  if (target <= log_start_offset()) return {};
  auto moved = log_->delete_records(target.value());
  if (!moved) return moved.error();
  return {};
}

std::error_code Partition::truncate_to(Offset offset) {
  if (auto ec = log_->truncate_to(offset.value())) return ec;
  return load_producer_state(clock_.wall_ms(), producer_expiration_ms_);
}

std::error_code Partition::truncate_fully_and_start_at(Offset offset) {
  if (auto ec = log_->truncate_fully_and_start_at(offset.value())) return ec;
  return load_producer_state(clock_.wall_ms(), producer_expiration_ms_);
}

bool Partition::enough_replicas_reached(Offset required, int32_t min_insync_replicas, ErrorCode& error) const {
  if (!is_leader()) {
    error = ErrorCode::not_leader_or_follower;
    return true;
  }
  if (high_watermark() < required) return false;
  error = static_cast<int32_t>(isr().size()) < min_insync_replicas ? ErrorCode::not_enough_replicas_after_append
                                                                   : ErrorCode::none;
  return true;
}

Offset Partition::last_stable_offset() const {
  const Offset high_watermark = this->high_watermark();
  const auto first_unstable = producers_.first_unstable_offset();
  return first_unstable && Offset(*first_unstable) < high_watermark ? Offset(*first_unstable) : high_watermark;
}

Offset Partition::last_fetchable_offset(FetchIsolation isolation) const {
  switch (isolation) {
    case FetchIsolation::log_end: return log_end_offset();
    case FetchIsolation::high_watermark: return high_watermark();
    case FetchIsolation::txn_committed: return last_stable_offset();
  }
  return high_watermark();
}

OffsetSnapshot Partition::offset_snapshot() const {
  return {log_start_offset(), log_end_offset(), high_watermark(), last_stable_offset()};
}

PartitionRead Partition::read(Offset fetch_offset, int64_t max_bytes, FetchIsolation isolation,
                              std::optional<LeaderEpoch> current_leader_epoch, bool min_one_batch) {
  PartitionRead out;
  out.error = check_local_log(current_leader_epoch, /*require_leader=*/isolation != FetchIsolation::log_end);
  if (out.error != ErrorCode::none) return out;
  // Kafka's readRecords: the offsets are taken before the read, so the
  // bound reported is never below the data returned.
  out.offsets = offset_snapshot();
  auto read = log_->read(fetch_offset.value(), max_bytes, last_fetchable_offset(isolation).value(), min_one_batch);
  if (!read) {
    out.error = read_error(read.error());
    return out;
  }
  out.records = read->records;
  if (isolation == FetchIsolation::txn_committed) {
    // Every aborted transaction from the fetch offset up to the last stable
    // offset: Kafka bounds it by the end of the batches read, a narrower
    // range; consumers skip entries past their records, so the answer
    // reads the same.
    auto aborted = log_->collect_aborted_txns(fetch_offset.value(), out.offsets->last_stable_offset.value());
    if (!aborted) {
      out.error = read_error(aborted.error());
      out.records = {};
      return out;
    }
    out.aborted_transactions = std::move(*aborted);
  }
  return out;
}

OffsetForTimestamp Partition::fetch_offset_for_timestamp(int64_t timestamp, FetchIsolation isolation,
                                                         std::optional<LeaderEpoch> current_leader_epoch,
                                                         bool require_leader) {
  constexpr int64_t kEarliestPendingUpload = -5;
  OffsetForTimestamp out;
  out.error = check_local_log(current_leader_epoch, require_leader);
  if (out.error != ErrorCode::none) return out;
  if (timestamp == kEarliestPendingUpload) return out;  // nothing is uploaded (no tiered storage): offset -1
  const Offset last_fetchable = last_fetchable_offset(isolation);
  if (timestamp == storage::Log::kLatestTimestamp) {
    out.found = storage::TimestampAndOffset{storage::kNoTimestamp, last_fetchable.value(), leader_epoch().value()};
    return out;
  }
  // Earliest local is the earliest: Runnel has no tiered storage.
  if (timestamp == storage::Log::kEarliestLocalTimestamp) timestamp = storage::Log::kEarliestTimestamp;
  auto found = log_->offset_for_timestamp(timestamp);
  if (!found) {
    out.error = ErrorCode::kafka_storage_error;
    return out;
  }
  out.found = *found;
  // A record a consumer cannot read yet is not an answer.
  if (out.found && timestamp != storage::Log::kEarliestTimestamp && out.found->offset >= last_fetchable.value())
    out.found.reset();
  return out;
}

EpochEndOffset Partition::last_offset_for_leader_epoch(std::optional<LeaderEpoch> current_leader_epoch,
                                                       LeaderEpoch leader_epoch, bool require_leader) const {
  EpochEndOffset out;
  out.error = check_local_log(current_leader_epoch, require_leader);
  if (out.error != ErrorCode::none) return out;
  auto [epoch, offset] = log_->end_offset_for_epoch(leader_epoch.value());
  out.leader_epoch = LeaderEpoch(epoch);
  out.end_offset = Offset(offset);
  return out;
}

std::error_code Partition::apply_marker(const protocol::records::BatchHeader& header,
                                        const protocol::records::EndTxnMarker& marker, int64_t offset,
                                        int64_t timestamp, TxnIndexWrite index) {
  auto done = producers_.update_marker(header.producer_id, header.producer_epoch, marker, offset, timestamp);
  if (!done) return {};
  // Kafka's UnifiedLog.append: the entry records the last stable offset as
  // it stands with this transaction decided, then the transaction waits
  // for the high watermark.
  if (done->aborted && index != TxnIndexWrite::none) {
    const storage::AbortedTxn entry{done->producer_id, done->first_offset, done->last_offset,
                                    producers_.last_stable_offset(*done)};
    if (auto ec = index == TxnIndexWrite::append ? log_->append_aborted_txn(entry)
                                                 : log_->append_aborted_txn_during_rebuild(entry))
      return ec;
  }
  producers_.complete_txn(*done);
  publish_first_unstable();
  return {};
}

std::error_code Partition::replay_producers(int64_t from, int64_t to, int64_t index_from) {
  // Batch headers only, read through the log in chunks of whole batches so
  // memory stays bounded.
  constexpr int64_t kChunk = 1 << 20;
  int64_t offset = from;
  protocol::Bytes buf;
  while (offset < to) {
    auto read = log_->read(offset, kChunk, to, true);
    if (!read) return read.error();
    const auto& region = read->records;
    if (region.length <= 0) break;
    buf.resize(static_cast<size_t>(region.length));
    ssize_t n = ::pread(region.fd, buf.data(), buf.size(), region.offset);
    if (n != static_cast<ssize_t>(buf.size())) return std::error_code(n < 0 ? errno : EIO, std::generic_category());
    protocol::records::BatchIterator it(buf);
    int64_t next = offset;
    while (auto b = it.next()) {
      const auto& h = b->header;
      if (h.is_control()) {
        if (auto marker = protocol::records::read_end_txn_marker(b->bytes, h))
          if (auto ec = apply_marker(h, *marker, h.base_offset, h.max_timestamp,
                                     index_from >= 0 ? TxnIndexWrite::rebuild : TxnIndexWrite::none))
            return ec;
      } else if (h.producer_id >= 0) {
        producers_.update(h, h.base_offset, h.max_timestamp);
      }
      next = h.last_offset() + 1;
    }
    if (next <= offset) break;  // no progress: nothing more to read
    offset = next;
  }
  return {};
}

std::error_code Partition::load_producer_state(int64_t now_ms, int64_t expiration_ms) {
  producer_expiration_ms_ = expiration_ms;
  producers_.clear();
  const auto& dir = log_->dir();
  const int64_t start = log_->log_start_offset();
  const int64_t end = log_->log_end_offset();
  // Kafka's truncateAndReload: a snapshot above the log end describes
  // batches the log no longer holds, and one at or below the log start is
  // not needed.
  if (auto ec = storage::delete_producer_snapshots_after(dir, end)) return ec;
  if (auto ec = storage::delete_producer_snapshots_before(dir, start + 1)) return ec;

  // Aborted-transaction indexes the log did not trust when it opened are
  // rebuilt by this replay, once: it must then start at or before the
  // first of them.
  const int64_t index_from = txn_index_rebuilt_ ? -1 : log_->txn_index_rebuild_from();
  txn_index_rebuilt_ = true;

  // The latest snapshot that reads back whole; a corrupt one is deleted
  // and the next older one tried.
  int64_t loaded_at = start;
  bool loaded = false;
  auto snapshots = storage::list_producer_snapshots(dir);
  for (auto it = snapshots.rbegin(); it != snapshots.rend() && !loaded; ++it) {
    if (index_from >= 0 && *it > index_from) continue;
    auto entries = storage::read_producer_snapshot(dir, *it);
    if (!entries) {
      if (entries.error() != storage::StorageErrc::corrupt_checkpoint) return entries.error();
      RLOG_WARN("%s-%d: producer snapshot at offset %lld is corrupt; deleting it", topic_.c_str(), index(),
                static_cast<long long>(*it));
      if (auto ec = storage::delete_producer_snapshot(dir, *it)) return ec;
      continue;
    }
    for (const auto& e : *entries)
      if (now_ms - e.timestamp < expiration_ms || e.current_txn_first_offset >= 0) producers_.load(e);
    loaded_at = *it;
    loaded = true;
  }

  // Kafka's rebuildProducerState: replay what follows, taking snapshots at
  // the last two segments' bases on the way and one at the log end, so the
  // next start (and a truncation) need not replay it again. Unlike Kafka,
  // a log without any snapshot is replayed even after a clean shutdown:
  // Kafka skips that for logs older than idempotence, but Runnel's older
  // data dirs hold idempotent batches and no snapshots.
  auto bases = log_->segment_base_offsets();
  std::vector<int64_t> snapshot_at;
  if (bases.size() >= 2) snapshot_at.push_back(bases[bases.size() - 2]);
  if (!bases.empty()) snapshot_at.push_back(bases.back());
  snapshot_at.push_back(end);
  int64_t at = loaded_at;
  for (int64_t target : snapshot_at) {
    if (target <= at) continue;
    if (auto ec = replay_producers(at, target, index_from)) return ec;
    at = target;
    auto entries = producers_.snapshot_entries(now_ms, expiration_ms);
    if (auto ec = storage::write_producer_snapshot(dir, at, entries)) return ec;
  }
  RLOG_DEBUG("%s-%d: producer state from %s at %lld, replayed to %lld: %zu producer(s)", topic_.c_str(), index(),
             loaded ? "snapshot" : "log start", static_cast<long long>(loaded_at), static_cast<long long>(end),
             producers_.size());
  // Transactions the replay completed below the high watermark are stable.
  on_high_watermark_moved();
  return {};
}

std::error_code Partition::write_producer_snapshot(int64_t offset) {
  return storage::write_producer_snapshot(log_->dir(), offset,
                                          producers_.snapshot_entries(clock_.wall_ms(), producer_expiration_ms_));
}

std::error_code Partition::snapshot_producers_before_close() {
  const int64_t end = log_->log_end_offset();
  if (log_->dir_offline() || end <= log_->log_start_offset()) return {};
  std::error_code missing;
  if (storage::fs::exists(storage::producer_snapshot_path(log_->dir(), end), missing)) return {};
  return write_producer_snapshot(end);
}

}  // namespace runnel::replication
