// OffsetDelete (key 47): removes a group's committed offsets for some
// partitions. Allowed for Empty groups, and for active consumer groups on
// topics none of their members subscribes to (GROUP_SUBSCRIBED_TO_TOPIC
// otherwise); unknown groups answer GROUP_ID_NOT_FOUND. As Kafka: DELETE on
// the group (else GROUP_AUTHORIZATION_FAILED) and READ on each topic
// (TOPIC_AUTHORIZATION_FAILED on its partitions).
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::OffsetDeleteResponse> handle<p::OffsetDeleteApi>(RequestContext& ctx, p::OffsetDeleteRequest& req) {
  Broker& b = ctx.broker;
  if (!authorized(ctx, AclOperation::delete_, ResourceType::group, req.group_id)) {
    p::OffsetDeleteResponse refused;
    refused.error_code = p::code(p::ErrorCode::group_authorization_failed);
    co_return refused;
  }
  std::vector<group::TopicPartition> partitions;
  std::vector<p::ErrorCode> known;
  for (const auto& t : req.topics) {
    const bool may_read = authorized(ctx, AclOperation::read, ResourceType::topic, t.name);
    for (const auto& part : t.partitions) {
      bool exists = may_read && b.topics().has_partition(t.name, part.partition_index);
      known.push_back(!may_read ? p::ErrorCode::topic_authorization_failed
                      : exists  ? p::ErrorCode::none
                                : p::ErrorCode::unknown_topic_or_partition);
      if (exists) partitions.push_back({t.name, part.partition_index});
    }
  }
  using Answer = std::pair<p::ErrorCode, std::vector<p::ErrorCode>>;
  auto c = std::make_shared<group::Completion<Answer>>(b.io().get_executor());
  b.groups().coordinator().delete_offsets(req.group_id, partitions, [done = group::completer(c)](
                                                                        p::ErrorCode e, std::vector<p::ErrorCode> es) {
    done({e, std::move(es)});
  });
  auto [top, errors] = co_await group::wait_for(c);
  p::OffsetDeleteResponse resp;
  resp.error_code = p::code(top);
  if (top != p::ErrorCode::none) co_return resp;
  size_t i = 0, j = 0;
  for (const auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    for (const auto& part : t.partitions) {
      auto& op = out.partitions.emplace_back();
      op.partition_index = part.partition_index;
      op.error_code = p::code(known[i] != p::ErrorCode::none ? known[i] : errors[j++]);
      ++i;
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
