// DeleteGroups (key 42): removes Empty groups and their offsets (tombstones
// in __consumer_offsets). A group with members answers NON_EMPTY_GROUP, an
// unknown one GROUP_ID_NOT_FOUND.
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::DeleteGroupsResponse> handle<p::DeleteGroupsApi>(RequestContext& ctx, p::DeleteGroupsRequest& req) {
  p::DeleteGroupsResponse resp;
  std::string synced;
  for (const auto& id : req.groups_names) {
    auto& out = resp.results.emplace_back();
    out.group_id = id;
    p::ErrorCode e = ctx.broker.groups().coordinator().delete_group(id);
    out.error_code = p::code(e);
    if (e == p::ErrorCode::none && synced.empty()) synced = id;
  }
  // One partition's fsync covers the common case of one group; the rest
  // reach the page cache (and the disk at the next flush).
  if (!synced.empty()) ctx.broker.groups().sync_before_response(ctx, synced);
  co_return resp;
}

}  // namespace runnel::broker
