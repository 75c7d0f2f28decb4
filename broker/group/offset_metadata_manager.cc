#include "broker/group/offset_metadata_manager.h"

#include <utility>

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

void OffsetMetadataManager::replay(const OffsetCommitKey& key, std::optional<ByteView> value) {
  if (!value) {
    if (auto* g = groups_.find_mutable(key.group)) g->offsets.erase({key.topic, key.partition});
    return;
  }
  auto v = decode_offset_value(*value);
  if (!v) return;
  groups_.get_or_create(key.group).offsets[{key.topic, key.partition}] =
      CommittedOffset{v->offset, v->leader_epoch, v->metadata, v->commit_timestamp, v->expire_timestamp};
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
    if (req.generation >= 0) {
      fail_all(req.unknown_group_not_found ? ErrorCode::group_id_not_found : ErrorCode::illegal_generation);
      return done(std::move(req));
    }
    g = &groups_.get_or_create(req.group_id);
  }
  if (ErrorCode e = g->validate_offset_commit(req.member_id, req.group_instance_id, req.generation);
      e != ErrorCode::none) {
    fail_all(e);
    return done(std::move(req));
  }
  // A commit keeps the member's session alive, as a heartbeat would.
  if (g->state == GroupState::stable || g->state == GroupState::preparing_rebalance)
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
  store_.append(partition, std::move(records),
                [this, req = std::move(req), staged = std::move(staged), done = std::move(done)](
                    std::error_code ec) mutable {
                  // The group may have been unloaded (the coordinator moved)
                  // or deleted while the append was in flight.
                  Group* g = ec ? nullptr : groups_.find_mutable(req.group_id);
                  if (!g) {
                    ErrorCode e = ec ? ErrorCode::coordinator_not_available : ErrorCode::not_coordinator;
                    for (auto& en : req.entries)
                      if (en.error == ErrorCode::none) en.error = e;
                  } else {
                    for (auto& [tp, c] : staged) g->offsets[tp] = c;
                  }
                  done(std::move(req));
                });
}

ErrorCode OffsetMetadataManager::fetch_offsets(const std::string& group_id,
                                               const std::optional<std::vector<TopicPartition>>& wanted,
                                               std::vector<FetchedOffset>& out) const {
  if (!groups_.owns(groups_.partition_for(group_id))) return ErrorCode::not_coordinator;
  if (groups_.is_loading(groups_.partition_for(group_id))) return ErrorCode::coordinator_load_in_progress;
  const Group* g = groups_.find(group_id);
  if (!wanted) {
    if (g)
      for (auto& [tp, c] : g->offsets) out.push_back({tp.first, tp.second, c.offset, c.leader_epoch, c.metadata});
    return ErrorCode::none;
  }
  for (auto& tp : *wanted) {
    FetchedOffset f{tp.first, tp.second, -1, -1, ""};
    if (g)
      if (auto it = g->offsets.find(tp); it != g->offsets.end())
        f = {tp.first, tp.second, it->second.offset, it->second.leader_epoch, it->second.metadata};
    out.push_back(std::move(f));
  }
  return ErrorCode::none;
}

void OffsetMetadataManager::expire_offsets() {
  const int64_t t = groups_.now();
  for (auto& id : groups_.group_ids()) {
    Group* g = groups_.find_mutable(id);
    if (!g || groups_.is_loading(g->partition) || g->state != GroupState::empty) continue;
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
      if (gone) expired.emplace_back(tp, c);
    }
    std::vector<OffsetsRecord> records;
    for (auto& [tp, c] : expired) records.push_back(offset_record(g->id, tp, nullptr));
    bool now_dead = g->offsets.size() == expired.size() && g->members.empty();
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
      if (g->offsets.empty() && g->members.empty() && g->state == GroupState::empty) groups_.remove_group(*g);
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
    if (g->offsets.count(partitions[i])) {
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
                    for (auto& tp : removed) g->offsets.erase(tp);
                  done(ErrorCode::none, std::move(errors));
                });
}

std::vector<OffsetsRecord> OffsetMetadataManager::delete_all_offsets(const Group& g) {
  std::vector<OffsetsRecord> records;
  for (auto& [tp, c] : g.offsets) records.push_back(offset_record(g.id, tp, nullptr));
  return records;
}

}  // namespace runnel::broker::group
