#include "broker/group/group_coordinator.h"

#include <utility>
#include <variant>

namespace runnel::broker::group {

GroupCoordinator::GroupCoordinator(CoordinatorConfig config, OffsetsStore& store, const Clock& clock, CoordinatorTimer& timer)
    : config_(config), store_(store), groups_(config_, store, clock, timer), offsets_(config_, store, groups_) {}

void GroupCoordinator::replay(int32_t partition, ByteView key, std::optional<ByteView> value) {
  (void)partition;
  auto k = decode_key(key);
  if (auto* ok = std::get_if<OffsetCommitKey>(&k)) offsets_.replay(*ok, value);
  else if (auto* gk = std::get_if<GroupMetadataKey>(&k)) groups_.replay(*gk, value);
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
  store_.append(g->partition, std::move(records),
                [this, group_id, tombstoned = std::move(tombstoned), done = std::move(done)](std::error_code ec) {
                  if (ec) return done(ErrorCode::coordinator_not_available);
                  if (Group* g = groups_.find_mutable(group_id)) {
                    // What was committed or joined while the tombstones were
                    // in flight was written after them, and stays.
                    for (auto& [tp, c] : tombstoned)
                      if (auto it = g->offsets.find(tp);
                          it != g->offsets.end() && it->second.commit_timestamp == c.commit_timestamp)
                        g->offsets.erase(it);
                    if (g->state == GroupState::empty && g->members.empty() && g->offsets.empty())
                      groups_.remove_group(*g);
                  }
                  done(ErrorCode::none);
                });
}

}  // namespace runnel::broker::group
