// Heartbeat (key 12): keeps a member's session alive and tells it when a
// rebalance is under way (REBALANCE_IN_PROGRESS). v3+ carries
// group.instance.id (static members are fenced by it, KIP-345).
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::HeartbeatResponse> handle<p::HeartbeatApi>(RequestContext& ctx, p::HeartbeatRequest& req) {
  p::HeartbeatResponse resp;
  // Kafka: READ on the group, else GROUP_AUTHORIZATION_FAILED.
  if (!authorized(ctx, AclOperation::read, ResourceType::group, req.group_id)) {
    resp.error_code = p::code(p::ErrorCode::group_authorization_failed);
    co_return resp;
  }
  resp.error_code = p::code(ctx.broker.groups().coordinator().heartbeat(req.group_id, req.member_id,
                                                                         req.group_instance_id, req.generation_id));
  co_return resp;
}

}  // namespace runnel::broker
