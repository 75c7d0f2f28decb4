#include "broker/group/group_coordinator.h"

#include <utility>
#include <variant>

namespace runnel::broker::group {

GroupCoordinator::GroupCoordinator(CoordinatorConfig config, OffsetsStore& store, const Clock& clock, CoordinatorTimer& timer)
    : config_(config), store_(store), groups_(config_, store, clock, timer), offsets_(config_, store, groups_) {}

void GroupCoordinator::replay(int32_t partition, ByteView key, std::optional<ByteView> value, int64_t offset,
                              int64_t producer_id) {
  (void)partition;
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
}

void GroupCoordinator::unload_all() {
  groups_.unload_all();
  offsets_.unload([](int32_t) { return true; });
  completed_while_loading_.clear();
}

void GroupCoordinator::unload_partition(int32_t partition) {
  groups_.unload_partition(partition);
  offsets_.unload([partition](int32_t p) { return p == partition; });
  completed_while_loading_.erase(partition);
}

void GroupCoordinator::delete_group(const std::string& group_id, std::function<void(ErrorCode)> done) {
  if (!owns(partition_for(group_id))) return done(ErrorCode::not_coordinator);
  if (is_loading(partition_for(group_id))) return done(ErrorCode::coordinator_load_in_progress);
  Group* g = groups_.find_mutable(group_id);
  if (!g || g->state == GroupState::dead) return done(ErrorCode::group_id_not_found);
  if (g->state != GroupState::empty) return done(ErrorCode::non_empty_group);
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
