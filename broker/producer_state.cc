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

SequenceCheck ProducerStateTable::check(const protocol::records::BatchHeader& batch) const {
  const ProducerEntry* entry = find(batch.producer_id);
  if (!entry) return {};  // no state: any sequence is accepted
  const int32_t first_seq = batch.base_sequence;
  const int32_t last_seq = batch.last_sequence();
  if (batch.producer_epoch == entry->epoch) {
    for (const auto& b : entry->batches)
      if (b.first_seq == first_seq && b.last_seq == last_seq) return {ErrorCode::none, &b};
  }
  if (batch.producer_epoch < entry->epoch) return {ErrorCode::invalid_producer_epoch, nullptr};
  if (batch.producer_epoch != entry->epoch) {
    // A bumped epoch (the client's recovery after an error) restarts at 0.
    if (first_seq != 0) return {ErrorCode::out_of_order_sequence_number, nullptr};
    return {};
  }
  if (entry->batches.empty()) return {};  // epoch known, sequence not: accepted, as Kafka does
  if (!in_sequence(entry->batches.back().last_seq, first_seq))
    return {ErrorCode::out_of_order_sequence_number, nullptr};
  return {};
}

void ProducerStateTable::update(const protocol::records::BatchHeader& batch, int64_t first_offset, int64_t timestamp) {
  ProducerEntry& entry = producers_[batch.producer_id];
  if (batch.producer_epoch != entry.epoch) {
    entry.epoch = batch.producer_epoch;
    entry.batches.clear();
  }
  entry.batches.push_back({batch.base_sequence, batch.last_sequence(), first_offset,
                           first_offset + batch.last_offset_delta, timestamp});
  if (entry.batches.size() > kBatchesToRetain) entry.batches.pop_front();
  entry.last_timestamp = timestamp;
}

void ProducerStateTable::expire(int64_t now_ms, int64_t expiration_ms) {
  std::erase_if(producers_, [&](const auto& kv) { return is_expired(kv.second, now_ms, expiration_ms); });
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
  producers_[e.producer_id] = std::move(entry);
}

}  // namespace runnel::broker
