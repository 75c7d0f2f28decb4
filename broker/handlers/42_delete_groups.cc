// DeleteGroups (key 42): removes Empty groups and their offsets (tombstones
// in __consumer_offsets). A group with members answers NON_EMPTY_GROUP, an
// unknown one GROUP_ID_NOT_FOUND, one without DELETE GROUP_AUTHORIZATION_FAILED.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::DeleteGroupsResponse> handle<p::DeleteGroupsApi>(RequestContext& ctx, p::DeleteGroupsRequest& req) {
  p::DeleteGroupsResponse resp;
  for (const auto& id : req.groups_names) {
    auto& out = resp.results.emplace_back();
    out.group_id = id;
    if (!authorized(ctx, AclOperation::delete_, ResourceType::group, id)) {
      out.error_code = p::code(p::ErrorCode::group_authorization_failed);
      continue;
    }
    auto c = std::make_shared<group::Completion<p::ErrorCode>>(ctx.broker.io().get_executor());
    ctx.broker.groups().coordinator().delete_group(id, group::completer(c));
    out.error_code = p::code(co_await group::wait_for(c));
  }
  co_return resp;
}

}  // namespace runnel::broker
