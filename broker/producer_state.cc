#include "broker/producer_state.h"

#include <algorithm>

namespace runnel::broker {

using protocol::ErrorCode;

namespace {

// Kafka's ProducerStateEntry.inSequence: the next batch continues the last.
bool in_sequence(int32_t last_seq, int32_t next_seq) {
  return static_cast<int64_t>(next_seq) == static_cast<int64_t>(last_seq) + 1 ||
         (next_seq == 0 && last_seq == INT32_MAX);
}

}  // namespace

const ProducerEntry* ProducerStateTable::find(int64_t producer_id) const {
  auto it = producers_.find(producer_id);
  return it == producers_.end() ? nullptr : &it->second;
}

SequenceCheck ProducerStateTable::check(const protocol::records::BatchHeader& batch, bool from_client) const {
  const ProducerEntry* entry = find(batch.producer_id);
  if (!entry) return {};  // no state: any sequence is accepted
  SequenceCheck out;
  if (from_client) out = check_sequence(*entry, batch);
  else if (batch.producer_epoch < entry->epoch) out.error = ErrorCode::invalid_producer_epoch;
  if (out.error != ErrorCode::none || out.duplicate_of) return out;
  // Kafka's appendDataBatch: once its epoch and sequence pass, a producer
  // with a transaction open may only write to it.
  if (entry->current_txn_first_offset >= 0 && !batch.is_transactional()) return {ErrorCode::invalid_txn_state, nullptr};
  return out;
}

bool ProducerStateTable::has_ongoing_txn(int64_t producer_id, int16_t producer_epoch) const {
  const ProducerEntry* entry = find(producer_id);
  return entry && entry->current_txn_first_offset >= 0 && entry->epoch == producer_epoch;
}

SequenceCheck ProducerStateTable::check_sequence(const ProducerEntry& entry,
                                                 const protocol::records::BatchHeader& batch) {
  const int32_t first_seq = batch.base_sequence;
  const int32_t last_seq = batch.last_sequence();
  if (batch.producer_epoch == entry.epoch) {
    for (const auto& b : entry.batches)
      if (b.first_seq == first_seq && b.last_seq == last_seq) return {ErrorCode::none, &b};
  }
  if (batch.producer_epoch < entry.epoch) return {ErrorCode::invalid_producer_epoch, nullptr};
  if (batch.producer_epoch != entry.epoch) {
    // A bumped epoch (the client's recovery after an error) restarts at 0.
    if (first_seq != 0) return {ErrorCode::out_of_order_sequence_number, nullptr};
    return {};
  }
  if (entry.batches.empty()) return {};  // epoch known, sequence not: accepted, as Kafka does
  if (!in_sequence(entry.batches.back().last_seq, first_seq))
    return {ErrorCode::out_of_order_sequence_number, nullptr};
  return {};
}

uint64_t ProducerStateTable::start_verification(int64_t producer_id, int64_t now_ms) {
  auto [it, added] = verifications_.try_emplace(producer_id, Verification{next_guard_, now_ms});
  if (added) ++next_guard_;
  return it->second.guard;
}

bool ProducerStateTable::verified(int64_t producer_id, uint64_t guard) const {
  auto it = verifications_.find(producer_id);
  return guard != 0 && it != verifications_.end() && it->second.guard == guard;
}

void ProducerStateTable::update(const protocol::records::BatchHeader& batch, int64_t first_offset, int64_t timestamp) {
  // The transaction has its first offset now: verified (Kafka's
  // clearVerificationStateEntry after a transactional append).
  if (batch.is_transactional()) verifications_.erase(batch.producer_id);
  ProducerEntry& entry = producers_[batch.producer_id];
  if (batch.producer_epoch != entry.epoch) {
    entry.epoch = batch.producer_epoch;
    entry.batches.clear();
  }
  entry.batches.push_back({batch.base_sequence, batch.last_sequence(), first_offset,
                           first_offset + batch.last_offset_delta, timestamp});
  if (entry.batches.size() > kBatchesToRetain) entry.batches.pop_front();
  entry.last_timestamp = timestamp;
  if (batch.is_transactional() && entry.current_txn_first_offset < 0) {
    entry.current_txn_first_offset = first_offset;
    ongoing_[first_offset] = {batch.producer_id, first_offset, -1};
  }
  mirror(batch.producer_id, entry);
}

ErrorCode ProducerStateTable::check_marker(int64_t producer_id, int16_t producer_epoch,
                                           const protocol::records::EndTxnMarker& marker,
                                           int8_t transaction_version) const {
  const ProducerEntry* entry = find(producer_id);
  if (!entry) return ErrorCode::none;
  const bool bumped_first = transaction_version >= 2;
  const bool stale = bumped_first ? producer_epoch <= entry->epoch : producer_epoch < entry->epoch;
  // KAFKA-19999: under version 2 a marker in the current epoch with no
  // transaction open was written already (a coordinator's retry).
  const bool retried = bumped_first && producer_epoch == entry->epoch && entry->current_txn_first_offset < 0;
  if (stale && !retried) return ErrorCode::invalid_producer_epoch;
  if (entry->coordinator_epoch > marker.coordinator_epoch) return ErrorCode::transaction_coordinator_fenced;
  return ErrorCode::none;
}

std::optional<CompletedTxn> ProducerStateTable::update_marker(int64_t producer_id, int16_t producer_epoch,
                                                              const protocol::records::EndTxnMarker& marker,
                                                              int64_t offset, int64_t timestamp) {
  // The transaction is over: a verification begun before it is void.
  verifications_.erase(producer_id);
  ProducerEntry& entry = producers_[producer_id];
  std::optional<CompletedTxn> completed;
  // A marker with no data before it (an empty transaction) moves no offset
  // and needs no index entry (Kafka emits no CompletedTxn for it).
  if (entry.current_txn_first_offset >= 0)
    completed = CompletedTxn{producer_id, entry.current_txn_first_offset, offset, !marker.commit()};
  // Kafka's ProducerStateEntry.update.
  if (producer_epoch != entry.epoch) {
    entry.epoch = producer_epoch;
    entry.batches.clear();
  }
  entry.coordinator_epoch = marker.coordinator_epoch;
  entry.last_timestamp = timestamp;
  entry.current_txn_first_offset = -1;
  mirror(producer_id, entry);
  return completed;
}

int64_t ProducerStateTable::last_stable_offset(const CompletedTxn& txn) const {
  for (const auto& [first, open] : ongoing_)
    if (open.producer_id != txn.producer_id) return first;
  return txn.last_offset + 1;
}

void ProducerStateTable::complete_txn(const CompletedTxn& txn) {
  auto it = ongoing_.find(txn.first_offset);
  if (it == ongoing_.end()) return;  // Kafka throws; replay after a truncation may not know it
  TxnMetadata done = it->second;
  done.last_offset = txn.last_offset;
  ongoing_.erase(it);
  unreplicated_[txn.first_offset] = done;
}

void ProducerStateTable::on_high_watermark_updated(int64_t high_watermark) {
  std::erase_if(unreplicated_, [&](const auto& kv) { return kv.second.last_offset < high_watermark; });
}

std::optional<int64_t> ProducerStateTable::first_unstable_offset() const {
  std::optional<int64_t> out;
  if (!unreplicated_.empty()) out = unreplicated_.begin()->first;
  if (!ongoing_.empty() && (!out || ongoing_.begin()->first < *out)) out = ongoing_.begin()->first;
  return out;
}

void ProducerStateTable::expire(int64_t now_ms, int64_t expiration_ms) {
  std::erase_if(producers_, [&](const auto& kv) {
    if (!is_expired(kv.second, now_ms, expiration_ms)) return false;
    if (mirror_) mirror_->erase(kv.first);
    return true;
  });
  std::erase_if(verifications_, [&](const auto& kv) { return now_ms - kv.second.since_ms >= expiration_ms; });
}

std::vector<storage::ProducerSnapshotEntry> ProducerStateTable::snapshot_entries(int64_t now_ms,
                                                                                int64_t expiration_ms) const {
  std::vector<storage::ProducerSnapshotEntry> out;
  for (const auto& [id, entry] : producers_) {
    if (is_expired(entry, now_ms, expiration_ms)) continue;
    storage::ProducerSnapshotEntry e;
    e.producer_id = id;
    e.epoch = entry.epoch;
    e.timestamp = entry.last_timestamp;
    e.coordinator_epoch = entry.coordinator_epoch;
    e.current_txn_first_offset = entry.current_txn_first_offset;
    if (!entry.batches.empty()) {
      const BatchMetadata& last = entry.batches.back();
      e.last_sequence = last.last_seq;
      e.last_offset = last.last_offset;
      e.offset_delta = static_cast<int32_t>(last.last_offset - last.first_offset);
    }
    out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.producer_id < b.producer_id; });
  return out;
}

void ProducerStateTable::load(const storage::ProducerSnapshotEntry& e) {
  ProducerEntry entry;
  entry.epoch = e.epoch;
  entry.last_timestamp = e.timestamp;
  if (e.last_offset >= 0) {
    // Kafka's BatchMetadata: the first sequence and offset follow from the
    // delta (the sequence wrapping past INT32_MAX).
    int32_t first_seq = e.last_sequence < e.offset_delta ? INT32_MAX - (e.offset_delta - e.last_sequence) + 1
                                                         : e.last_sequence - e.offset_delta;
    entry.batches.push_back({first_seq, e.last_sequence, e.last_offset - e.offset_delta, e.last_offset, e.timestamp});
  }
  entry.coordinator_epoch = e.coordinator_epoch;
  entry.current_txn_first_offset = e.current_txn_first_offset;
  if (e.current_txn_first_offset >= 0)
    ongoing_[e.current_txn_first_offset] = {e.producer_id, e.current_txn_first_offset, -1};
  mirror(e.producer_id, entry);
  producers_[e.producer_id] = std::move(entry);
}

void ProducerStateTable::mirror_to(storage::ActiveProducers* m) {
  mirror_ = m;
  if (!mirror_) return;
  mirror_->clear();
  for (const auto& [id, entry] : producers_) mirror(id, entry);
}

void ProducerStateTable::mirror(int64_t producer_id, const ProducerEntry& entry) {
  if (!mirror_) return;
  storage::LastRecord last;
  if (!entry.batches.empty()) last.last_data_offset = entry.batches.back().last_offset;
  last.producer_epoch = entry.epoch;
  mirror_->set(producer_id, last);
}

}  // namespace runnel::broker
