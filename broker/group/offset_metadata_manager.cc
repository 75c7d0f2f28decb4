#include "broker/group/offset_metadata_manager.h"

#include <utility>

#include "broker/coordinator_append_error.h"

namespace runnel::broker::group {

namespace {

OffsetsRecord offset_record(const std::string& group, const TopicPartition& tp, const CommittedOffset* value) {
  OffsetsRecord r;
  r.key = encode_key(OffsetCommitKey{group, tp.first, tp.second});
  if (value)
    r.value = encode_value(OffsetCommitValue{value->offset, value->leader_epoch, value->metadata,
                                             value->commit_timestamp, value->expire_timestamp});
  return r;
}

}  // namespace

OffsetMetadataManager::OffsetMetadataManager(const CoordinatorConfig& config, OffsetsStore& store,
                                             GroupMetadataManager& groups)
    : config_(config), store_(store), groups_(groups) {}

void OffsetMetadataManager::replay(const OffsetCommitKey& key, std::optional<ByteView> value, int64_t record_offset,
                                   int64_t producer_id) {
  const TopicPartition tp{key.topic, key.partition};
  if (!value) {
    if (auto* g = groups_.find_mutable(key.group)) g->erase_offset(tp);
    return;
  }
  auto v = decode_offset_value(*value);
  if (!v) return;
  Group& g = groups_.get_or_create(key.group);
  CommittedOffset c{v->offset, v->leader_epoch, v->metadata, v->commit_timestamp, v->expire_timestamp, record_offset};
  if (producer_id < 0) {
    g.offsets[tp] = std::move(c);
    return;
  }
  hold_pending(g, producer_id, tp, std::move(c));
}

void OffsetMetadataManager::hold_pending(Group& g, int64_t producer_id, const TopicPartition& tp, CommittedOffset c) {
  g.pending_txn_offsets[producer_id][tp] = std::move(c);
  open_transactions_[{g.partition, producer_id}].insert(g.id);
}

void OffsetMetadataManager::complete_transaction(int32_t partition, int64_t producer_id, bool commit) {
  auto it = open_transactions_.find({partition, producer_id});
  if (it == open_transactions_.end()) return;
  const std::set<std::string> groups = std::move(it->second);
  open_transactions_.erase(it);
  for (const auto& id : groups) {
    Group* g = groups_.find_mutable(id);
    if (!g) continue;
    auto pending = g->pending_txn_offsets.find(producer_id);
    if (pending == g->pending_txn_offsets.end()) continue;
    if (commit)
      for (auto& [tp, c] : pending->second) {
        auto existing = g->offsets.find(tp);
        if (existing == g->offsets.end() || c.record_offset > existing->second.record_offset) g->offsets[tp] = c;
      }
    g->pending_txn_offsets.erase(pending);
  }
}

void OffsetMetadataManager::unload(const std::function<bool(int32_t)>& which) {
  std::erase_if(open_transactions_, [&](const auto& entry) { return which(entry.first.first); });
}

void OffsetMetadataManager::commit_offsets(OffsetCommitRequest req, CommitDone done) {
  auto fail_all = [&req](ErrorCode e) {
    for (auto& en : req.entries)
      if (en.error == ErrorCode::none) en.error = e;
  };
  if (!groups_.owns(groups_.partition_for(req.group_id))) {
    fail_all(ErrorCode::not_coordinator);
    return done(std::move(req));
  }
  if (groups_.is_loading(groups_.partition_for(req.group_id))) {
    fail_all(ErrorCode::coordinator_load_in_progress);
    return done(std::move(req));
  }
  Group* g = groups_.find_mutable(req.group_id);
  if (!g) {
    // Generation -1: a standalone consumer that only stores offsets here.
    // TxnOffsetCommit answers ILLEGAL_GENERATION at every version.
    if (req.generation >= 0) {
      fail_all(req.unknown_group_not_found && !req.transaction ? ErrorCode::group_id_not_found
                                                                : ErrorCode::illegal_generation);
      return done(std::move(req));
    }
    g = &groups_.get_or_create(req.group_id);
  }
  if (ErrorCode e = g->validate_offset_commit(req.member_id, req.group_instance_id, req.generation,
                                                 req.transaction.has_value());
      e != ErrorCode::none) {
    fail_all(e);
    return done(std::move(req));
  }
  // A commit keeps the member's session alive, as a heartbeat would (not
  // a transactional one, as in Kafka).
  if (!req.transaction && (g->state == GroupState::stable || g->state == GroupState::preparing_rebalance))
    if (auto m = g->members.find(req.member_id); m != g->members.end()) groups_.schedule_heartbeat(*g, m->second);
  const int64_t t = groups_.now();
  std::vector<OffsetsRecord> records;
  std::vector<std::pair<TopicPartition, CommittedOffset>> staged;
  for (auto& en : req.entries) {
    if (en.error != ErrorCode::none) continue;
    if (en.metadata && static_cast<int64_t>(en.metadata->size()) > config_.offset_metadata_max_bytes) {
      en.error = ErrorCode::offset_metadata_too_large;
      continue;
    }
    CommittedOffset c{en.offset, en.leader_epoch, en.metadata.value_or(""), t, std::nullopt};
    if (req.retention_ms >= 0) c.expire_timestamp = t + req.retention_ms;
    TopicPartition tp{en.topic, en.partition};
    records.push_back(offset_record(g->id, tp, &c));
    staged.emplace_back(tp, c);
  }
  if (records.empty()) return done(std::move(req));
  const int32_t partition = g->partition;
  const std::optional<TxnProducer> txn = req.transaction;
  store_.write(partition, std::move(records), txn,
               [this, req = std::move(req), staged = std::move(staged), done = std::move(done)](Written w) mutable {
                 // The group may have been unloaded (the coordinator moved)
                 // or deleted while the write was in flight.
                 Group* g = w.error != ErrorCode::none ? nullptr : groups_.find_mutable(req.group_id);
                 if (!g) {
                   ErrorCode e = w.error == ErrorCode::none ? ErrorCode::not_coordinator
                                                            : coordinator_append_error(w.error);
                   for (auto& en : req.entries)
                     if (en.error == ErrorCode::none) en.error = e;
                   return done(std::move(req));
                 }
                 for (size_t i = 0; i < staged.size(); ++i) {
                   auto& [tp, c] = staged[i];
                   c.record_offset = w.base_offset + static_cast<int64_t>(i);
                   if (!req.transaction) {
                     g->offsets[tp] = c;
                     continue;
                   }
                   hold_pending(*g, req.transaction->producer_id, tp, c);
                 }
                 done(std::move(req));
               });
}

ErrorCode OffsetMetadataManager::fetch_offsets(const std::string& group_id,
                                               const std::optional<std::vector<TopicPartition>>& wanted,
                                               std::vector<FetchedOffset>& out, bool require_stable) const {
  if (!groups_.owns(groups_.partition_for(group_id))) return ErrorCode::not_coordinator;
  if (groups_.is_loading(groups_.partition_for(group_id))) return ErrorCode::coordinator_load_in_progress;
  const Group* g = groups_.find(group_id);
  auto fetched = [&](const TopicPartition& tp, const CommittedOffset* c) {
    if (require_stable && g->has_pending_txn_offset(tp))
      return FetchedOffset{tp.first, tp.second, -1, -1, "", ErrorCode::unstable_offset_commit};
    if (!c) return FetchedOffset{tp.first, tp.second, -1, -1, ""};
    return FetchedOffset{tp.first, tp.second, c->offset, c->leader_epoch, c->metadata};
  };
  if (!wanted) {
    if (g)
      for (auto& [tp, c] : g->offsets) out.push_back(fetched(tp, &c));
    return ErrorCode::none;
  }
  for (auto& tp : *wanted) {
    if (!g) {
      out.push_back({tp.first, tp.second, -1, -1, ""});
      continue;
    }
    auto it = g->offsets.find(tp);
    out.push_back(fetched(tp, it == g->offsets.end() ? nullptr : &it->second));
  }
  return ErrorCode::none;
}

void OffsetMetadataManager::expire_offsets() {
  const int64_t t = groups_.now();
  for (auto& id : groups_.group_ids()) {
    Group* g = groups_.find_mutable(id);
    if (!g || groups_.is_loading(g->partition) || g->state != GroupState::empty) continue;
    if (in_use_ && in_use_(id)) continue;
    std::vector<std::pair<TopicPartition, CommittedOffset>> expired;
    for (auto& [tp, c] : g->offsets) {
      bool gone;
      if (c.expire_timestamp) gone = t >= *c.expire_timestamp;
      else {
        // A group that used group management counts from when it became
        // empty; a standalone consumer's offsets from their commit.
        int64_t base = g->protocol_type ? g->current_state_timestamp : c.commit_timestamp;
        gone = t - base >= config_.offsets_retention_ms;
      }
      // An open transaction's offset for the partition waits for its end.
      if (gone && !g->has_pending_txn_offset(tp)) expired.emplace_back(tp, c);
    }
    std::vector<OffsetsRecord> records;
    for (auto& [tp, c] : expired) records.push_back(offset_record(g->id, tp, nullptr));
    bool now_dead = g->offsets.size() == expired.size() && g->members.empty() && g->pending_txn_offsets.empty();
    if (now_dead) records.push_back(GroupMetadataManager::group_tombstone(*g));
    if (records.empty()) continue;
    store_.append(g->partition, std::move(records), [this, id, expired = std::move(expired)](std::error_code ec) {
      Group* g = ec ? nullptr : groups_.find_mutable(id);
      if (!g) return;
      // Only what the tombstones cover: an offset committed again while
      // they were in flight stays.
      for (auto& [tp, c] : expired)
        if (auto it = g->offsets.find(tp); it != g->offsets.end() && it->second.commit_timestamp == c.commit_timestamp)
          g->offsets.erase(it);
      if (!g->holds_offsets() && g->members.empty() && g->state == GroupState::empty) groups_.remove_group(*g);
    });
  }
}

void OffsetMetadataManager::delete_offsets(const std::string& group_id, const std::vector<TopicPartition>& partitions,
                                           DeleteDone done) {
  std::vector<ErrorCode> errors(partitions.size(), ErrorCode::none);
  if (!groups_.owns(groups_.partition_for(group_id))) return done(ErrorCode::not_coordinator, {});
  if (groups_.is_loading(groups_.partition_for(group_id))) return done(ErrorCode::coordinator_load_in_progress, {});
  Group* g = groups_.find_mutable(group_id);
  if (!g || g->state == GroupState::dead) return done(ErrorCode::group_id_not_found, {});
  if (g->state != GroupState::empty && g->protocol_type != "consumer") return done(ErrorCode::non_empty_group, {});
  std::vector<OffsetsRecord> records;
  std::vector<TopicPartition> removed;
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (g->is_subscribed_to(partitions[i].first)) {
      errors[i] = ErrorCode::group_subscribed_to_topic;
      continue;
    }
    // Kafka writes a tombstone for a committed or a pending offset.
    if (g->offsets.count(partitions[i]) || g->has_pending_txn_offset(partitions[i])) {
      records.push_back(offset_record(g->id, partitions[i], nullptr));
      removed.push_back(partitions[i]);
    }
  }
  if (records.empty()) return done(ErrorCode::none, std::move(errors));
  store_.append(g->partition, std::move(records),
                [this, group_id, removed = std::move(removed), errors = std::move(errors),
                 done = std::move(done)](std::error_code ec) mutable {
                  if (ec) return done(ErrorCode::coordinator_not_available, {});
                  if (Group* g = groups_.find_mutable(group_id))
                    for (auto& tp : removed) g->erase_offset(tp);
                  done(ErrorCode::none, std::move(errors));
                });
}

std::vector<OffsetsRecord> OffsetMetadataManager::delete_all_offsets(const Group& g) {
  std::set<TopicPartition> partitions;
  for (auto& [tp, c] : g.offsets) partitions.insert(tp);
  for (auto& [producer_id, pending] : g.pending_txn_offsets)
    for (auto& [tp, c] : pending) partitions.insert(tp);
  std::vector<OffsetsRecord> records;
  for (auto& tp : partitions) records.push_back(offset_record(g.id, tp, nullptr));
  return records;
}

}  // namespace runnel::broker::group
