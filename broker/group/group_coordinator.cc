#include "broker/group/group_coordinator.h"

#include <utility>
#include <variant>

namespace runnel::broker::group {

GroupCoordinator::GroupCoordinator(CoordinatorConfig config, OffsetsStore& store, Clock clock, CoordinatorTimer& timer)
    : config_(config), store_(store), groups_(config_, store, std::move(clock), timer), offsets_(config_, store, groups_) {}

void GroupCoordinator::replay(int32_t partition, ByteView key, std::optional<ByteView> value) {
  (void)partition;
  auto k = decode_key(key);
  if (auto* ok = std::get_if<OffsetCommitKey>(&k)) offsets_.replay(*ok, value);
  else if (auto* gk = std::get_if<GroupMetadataKey>(&k)) groups_.replay(*gk, value);
}

ErrorCode GroupCoordinator::delete_group(const std::string& group_id) {
  if (is_loading(partition_for(group_id))) return ErrorCode::coordinator_load_in_progress;
  Group* g = groups_.find_mutable(group_id);
  if (!g || g->state == GroupState::dead) return ErrorCode::group_id_not_found;
  if (g->state != GroupState::empty) return ErrorCode::non_empty_group;
  std::vector<OffsetsRecord> records = OffsetMetadataManager::delete_all_offsets(*g);
  records.push_back(GroupMetadataManager::group_tombstone(*g));
  if (store_.append(g->partition, records)) return ErrorCode::coordinator_not_available;
  groups_.remove_group(*g);
  return ErrorCode::none;
}

}  // namespace runnel::broker::group
