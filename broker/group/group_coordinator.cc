#include "broker/group/group_coordinator.h"

#include <utility>
#include <variant>

#include "broker/group/consumer/consumer_group_records.h"
#include "protocol/coordinator_record.h"

namespace runnel::broker::group {

namespace {

consumer::ConsumerHeartbeatResult heartbeat_failure(ErrorCode e) {
  consumer::ConsumerHeartbeatResult r;
  r.error = e;
  return r;
}

}  // namespace

GroupCoordinator::GroupCoordinator(CoordinatorConfig config, OffsetsStore& store, const Clock& clock, CoordinatorTimer& timer,
                                   const consumer::TopicsImage& topics)
    : config_(config), store_(store), groups_(config_, store, clock, timer), offsets_(config_, store, groups_) {
  consumer_groups_ = std::make_unique<consumer::ConsumerGroupManager>(
      config_.consumer, store, clock, timer, topics,
      [this](const std::string& group_id) { return groups_.partition_for(group_id); },
      [this](const std::string& group_id) { return has_classic_members(group_id); },
      [this](int32_t partition) { return owns(partition) && !is_loading(partition); });
  // A consumer group's offsets do not expire while it has members (Kafka
  // expires a consumer group's offsets only once it is empty).
  offsets_.set_in_use([this](const std::string& group_id) {
    const consumer::ConsumerGroup* cg = consumer_groups_->find(group_id);
    return cg && !cg->members.empty();
  });
}

bool GroupCoordinator::has_classic_members(const std::string& group_id) const {
  const Group* g = groups_.find(group_id);
  return g && g->state != GroupState::dead && !g->members.empty();
}

const consumer::ConsumerGroup* GroupCoordinator::consumer_group_of(const std::string& group_id) const {
  return has_classic_members(group_id) ? nullptr : consumer_groups_->find(group_id);
}

ErrorCode GroupCoordinator::not_serving(const std::string& group_id) const {
  const int32_t p = partition_for(group_id);
  if (!owns(p)) return ErrorCode::not_coordinator;
  if (is_loading(p)) return ErrorCode::coordinator_load_in_progress;
  return ErrorCode::none;
}

void GroupCoordinator::replay(int32_t partition, ByteView key, std::optional<ByteView> value, int64_t offset,
                              int64_t producer_id) {
  (void)partition;
  if (auto type = protocol::record_type(key); type && consumer::is_consumer_group_record(*type)) {
    consumer_groups_->replay(key, value);
    return;
  }
  auto k = decode_key(key);
  if (auto* ok = std::get_if<OffsetCommitKey>(&k)) offsets_.replay(*ok, value, offset, producer_id);
  else if (auto* gk = std::get_if<GroupMetadataKey>(&k)) groups_.replay(*gk, value);
}

void GroupCoordinator::complete_transaction(int32_t partition, int64_t producer_id, bool commit) {
  if (groups_.is_loading(partition)) completed_while_loading_[partition].emplace_back(producer_id, commit);
  offsets_.complete_transaction(partition, producer_id, commit);
}

void GroupCoordinator::end_loading(int32_t partition) {
  // Before the group manager drops the groups left with nothing.
  if (auto it = completed_while_loading_.find(partition); it != completed_while_loading_.end()) {
    for (auto [producer_id, commit] : it->second) offsets_.complete_transaction(partition, producer_id, commit);
    completed_while_loading_.erase(it);
  }
  groups_.end_loading(partition);
  consumer_groups_->loaded([partition](int32_t p) { return p == partition; });
}

void GroupCoordinator::unload_all() {
  groups_.unload_all();
  offsets_.unload([](int32_t) { return true; });
  consumer_groups_->unload([](int32_t) { return true; });
  completed_while_loading_.clear();
}

void GroupCoordinator::unload_partition(int32_t partition) {
  groups_.unload_partition(partition);
  offsets_.unload([partition](int32_t p) { return p == partition; });
  consumer_groups_->unload([partition](int32_t p) { return p == partition; });
  completed_while_loading_.erase(partition);
}

void GroupCoordinator::join(JoinRequest req, JoinCallback done) {
  // A classic member may not join a consumer group with members (Kafka
  // without online migration).
  if (const consumer::ConsumerGroup* cg = consumer_groups_->find(req.group_id); cg && !cg->members.empty()) {
    JoinResult r;
    r.error = ErrorCode::inconsistent_group_protocol;
    r.member_id = req.member_id;
    return done(std::move(r));
  }
  groups_.join(std::move(req), std::move(done));
}

void GroupCoordinator::commit_offsets(OffsetCommitRequest req, OffsetMetadataManager::CommitDone done,
                                      int16_t api_version) {
  // A classic group that took the id of an empty consumer group commits
  // as classic members do.
  if (const consumer::ConsumerGroup* cg = consumer_group_of(req.group_id)) {
    // Kafka's ConsumerGroup.validateOffsetCommit. An empty group takes
    // commits from anyone with no epoch (the admin client, a consumer
    // outside the group); so does a transaction without member details
    // (TxnOffsetCommit before v3).
    ErrorCode e = ErrorCode::none;
    const bool anonymous = req.generation < 0 && (cg->members.empty() || (req.transaction && req.member_id.empty()));
    if (!anonymous) {
      auto m = cg->members.find(req.member_id);
      if (m == cg->members.end()) e = ErrorCode::unknown_member_id;
      else if (!req.transaction && api_version < 9) e = ErrorCode::unsupported_version;
      // TxnOffsetCommit has no STALE_MEMBER_EPOCH: Kafka answers ILLEGAL_GENERATION.
      else if (req.generation != m->second.member_epoch)
        e = req.transaction ? ErrorCode::illegal_generation : ErrorCode::stale_member_epoch;
    }
    if (e != ErrorCode::none) {
      for (auto& en : req.entries)
        if (en.error == ErrorCode::none) en.error = e;
      return done(std::move(req));
    }
    // Checked: stored as a standalone consumer's, on the offsets-only
    // classic entry of the id.
    req.generation = -1;
    req.member_id.clear();
    req.group_instance_id.reset();
  }
  offsets_.commit_offsets(std::move(req), std::move(done));
}

void GroupCoordinator::consumer_heartbeat(consumer::ConsumerHeartbeat req, consumer::HeartbeatDone done) {
  if (!req.group_id.empty())
    if (ErrorCode e = not_serving(req.group_id); e != ErrorCode::none) return done(heartbeat_failure(e));
  consumer_groups_->heartbeat(std::move(req), std::move(done));
}

ErrorCode GroupCoordinator::describe_consumer_group(const std::string& group_id,
                                                    const consumer::ConsumerGroup*& out) const {
  out = nullptr;
  if (ErrorCode e = not_serving(group_id); e != ErrorCode::none) return e;
  out = consumer_groups_->find(group_id);
  return out ? ErrorCode::none : ErrorCode::group_id_not_found;
}

ErrorCode GroupCoordinator::list_groups(std::vector<GroupListing>& out) const {
  std::vector<GroupListing> classic;
  if (ErrorCode e = groups_.list_groups(classic); e != ErrorCode::none) return e;
  for (auto& g : classic) {
    // A consumer group's offsets live on a classic entry with no members.
    if (consumer_group_of(g.group_id)) continue;
    out.push_back(std::move(g));
  }
  consumer_groups_->for_each_group([&](const consumer::ConsumerGroup& cg) {
    if (!owns(partition_for(cg.group_id)) || has_classic_members(cg.group_id)) return;
    out.push_back({cg.group_id, "consumer", consumer::state_name(cg.state()), "consumer"});
  });
  return ErrorCode::none;
}

void GroupCoordinator::delete_group(const std::string& group_id, std::function<void(ErrorCode)> done) {
  if (ErrorCode e = not_serving(group_id); e != ErrorCode::none) return done(e);
  const consumer::ConsumerGroup* cg = consumer_groups_->find(group_id);
  if (cg && !cg->members.empty()) return done(ErrorCode::non_empty_group);
  Group* g = groups_.find_mutable(group_id);
  if (!g || g->state == GroupState::dead) {
    if (cg) return consumer_groups_->delete_group(group_id, std::move(done));
    return done(ErrorCode::group_id_not_found);
  }
  if (g->state != GroupState::empty) return done(ErrorCode::non_empty_group);
  if (cg) {
    // The empty consumer group's records go first, its offsets with the
    // classic entry that holds them.
    consumer_groups_->delete_group(group_id, [this, group_id, done = std::move(done)](ErrorCode e) mutable {
      if (e != ErrorCode::none) return done(e);
      delete_group(group_id, std::move(done));
    });
    return;
  }
  std::vector<OffsetsRecord> records = OffsetMetadataManager::delete_all_offsets(*g);
  records.push_back(GroupMetadataManager::group_tombstone(*g));
  auto tombstoned = g->offsets;
  auto pending = g->pending_txn_offsets;
  store_.append(g->partition, std::move(records),
                [this, group_id, tombstoned = std::move(tombstoned), pending = std::move(pending),
                 done = std::move(done)](std::error_code ec) {
                  if (ec) return done(ErrorCode::coordinator_not_available);
                  if (Group* g = groups_.find_mutable(group_id)) {
                    // What was committed or joined while the tombstones were
                    // in flight was written after them, and stays.
                    for (auto& [tp, c] : tombstoned)
                      if (auto it = g->offsets.find(tp);
                          it != g->offsets.end() && it->second.commit_timestamp == c.commit_timestamp)
                        g->offsets.erase(it);
                    for (auto& [producer_id, offsets] : pending) {
                      auto open = g->pending_txn_offsets.find(producer_id);
                      if (open == g->pending_txn_offsets.end()) continue;
                      for (auto& [tp, c] : offsets)
                        if (auto it = open->second.find(tp);
                            it != open->second.end() && it->second.record_offset == c.record_offset)
                          open->second.erase(it);
                      if (open->second.empty()) g->pending_txn_offsets.erase(open);
                    }
                    if (g->state == GroupState::empty && g->members.empty() && !g->holds_offsets())
                      groups_.remove_group(*g);
                  }
                  done(ErrorCode::none);
                });
}

}  // namespace runnel::broker::group
