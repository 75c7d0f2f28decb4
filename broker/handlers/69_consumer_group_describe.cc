// ConsumerGroupDescribe (key 69): KIP-848 consumer groups as the
// coordinator holds them: state, group and assignment epochs, the assignor,
// and each member with its current and target assignment by topic id and
// name. As Kafka: DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED;
// GROUP_ID_NOT_FOUND for a group that is not there or is a classic one.
// v1 names each member's type (KIP-1099): every member here speaks the
// consumer protocol.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

constexpr int8_t kConsumerMemberType = 1;

p::ConsumerGroupDescribeAssignment described(const group::consumer::Assignment& a, const cluster::MetadataImage& image) {
  p::ConsumerGroupDescribeAssignment out;
  for (const auto& [topic, partitions] : a) {
    auto& tp = out.topic_partitions.emplace_back();
    tp.topic_id = topic;
    if (auto t = image.topic(topic)) tp.topic_name = t->name;
    tp.partitions.assign(partitions.begin(), partitions.end());
  }
  return out;
}

}  // namespace

template <>
awaitable<p::ConsumerGroupDescribeResponse> handle<p::ConsumerGroupDescribeApi>(RequestContext& ctx,
                                                                                 p::ConsumerGroupDescribeRequest& req) {
  p::ConsumerGroupDescribeResponse resp;
  const auto& coordinator = ctx.broker.groups().coordinator();
  const auto image = ctx.broker.metadata_cache().image();
  for (const auto& id : req.group_ids) {
    auto& out = resp.groups.emplace_back();
    out.group_id = id;
    if (!authorized(ctx, AclOperation::describe, ResourceType::group, id)) {
      out.error_code = p::code(p::ErrorCode::group_authorization_failed);
      continue;
    }
    const group::consumer::ConsumerGroup* g = nullptr;
    p::ErrorCode e = coordinator.describe_consumer_group(id, g);
    out.error_code = p::code(e);
    if (e == p::ErrorCode::group_id_not_found) {
      const group::Group* classic = coordinator.find(id);
      out.error_message = classic && !classic->members.empty() ? "Group " + id + " is not a consumer group."
                                                               : "Group " + id + " not found.";
    }
    if (!g) continue;
    out.group_state = group::consumer::state_name(g->state());
    out.group_epoch = g->group_epoch;
    out.assignment_epoch = g->assignment_epoch;
    out.assignor_name = std::string(coordinator.consumer_groups().assignor_name(*g));
    for (const auto& [member_id, m] : g->members) {
      auto& om = out.members.emplace_back();
      om.member_id = member_id;
      om.instance_id = m.instance_id;
      om.rack_id = m.rack_id;
      om.member_epoch = m.member_epoch;
      om.client_id = m.client_id;
      om.client_host = m.client_host;
      om.subscribed_topic_names = m.subscribed_topic_names;
      om.subscribed_topic_regex = m.subscribed_topic_regex;
      om.assignment = described(m.assigned_partitions, *image);
      om.target_assignment = described(g->target_of(member_id), *image);
      om.member_type = kConsumerMemberType;
    }
    if (req.include_authorized_operations)
      out.authorized_operations = authorized_operations(ctx, ResourceType::group, id);
  }
  co_return resp;
}

}  // namespace runnel::broker
