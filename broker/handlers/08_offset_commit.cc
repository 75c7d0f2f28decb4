// OffsetCommit (key 8): stores a group's consumed positions in
// __consumer_offsets. Generation -1 with an empty member id is a standalone
// consumer (allowed while the group is Empty); otherwise the member and its
// generation must be current (group/offset_metadata_manager.cc has the rules).
// v2-4 carry RetentionTimeMs (an explicit expiry), v6+ the leader epoch,
// v7+ group.instance.id, v8+ flexible, v10 topics by id.
// As Kafka's handleOffsetCommitRequest: READ on the group (else every
// partition is GROUP_AUTHORIZATION_FAILED), then READ on each topic
// (TOPIC_AUTHORIZATION_FAILED, nothing stored for it).
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/completion.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::OffsetCommitResponse> handle<p::OffsetCommitApi>(RequestContext& ctx, p::OffsetCommitRequest& req) {
  Broker& b = ctx.broker;
  const int16_t v = ctx.api_version();
  const bool group_allowed = authorized(ctx, AclOperation::read, ResourceType::group, req.group_id);
  group::OffsetCommitRequest cr;
  cr.group_id = req.group_id;
  cr.generation = req.generation_id_or_member_epoch;
  cr.member_id = req.member_id;
  cr.group_instance_id = req.group_instance_id;
  cr.retention_ms = v <= 4 ? req.retention_time_ms : -1;
  cr.unknown_group_not_found = v >= 9;
  // Each request topic's name (resolved from its id at v10), or nothing.
  std::vector<std::optional<std::string>> names;
  for (auto& t : req.topics) {
    std::shared_ptr<Topic> topic = v >= 10 ? b.topics().find(t.topic_id) : b.topics().find(t.name);
    names.push_back(topic ? std::optional(topic->name) : std::nullopt);
    for (auto& part : t.partitions) {
      group::OffsetCommitEntry e;
      e.topic = topic ? topic->name : t.name;
      e.partition = part.partition_index;
      e.offset = part.committed_offset;
      e.leader_epoch = part.committed_leader_epoch;
      e.metadata = part.committed_metadata;
      if (!group_allowed) e.error = p::ErrorCode::group_authorization_failed;
      else if ((topic || v < 10) && !authorized(ctx, AclOperation::read, ResourceType::topic, e.topic))
        e.error = p::ErrorCode::topic_authorization_failed;
      else if (!topic) e.error = v >= 10 ? p::ErrorCode::unknown_topic_id : p::ErrorCode::unknown_topic_or_partition;
      else if (!b.topics().has_partition(topic->name, part.partition_index)) e.error = p::ErrorCode::unknown_topic_or_partition;
      cr.entries.push_back(std::move(e));
    }
  }
  // Answered once the offsets are stored (and, with
  // runnel.acks.all.fsync, fsynced), as an acks=all produce is.
  if (group_allowed) {
    auto c = std::make_shared<group::Completion<group::OffsetCommitRequest>>(b.io().get_executor());
    b.groups().coordinator().commit_offsets(std::move(cr), group::completer(c), v);
    cr = co_await group::wait_for(c);
  }

  p::OffsetCommitResponse resp;
  size_t i = 0;
  for (auto& t : req.topics) {
    auto& out = resp.topics.emplace_back();
    out.name = t.name;
    out.topic_id = t.topic_id;
    for (auto& part : t.partitions) {
      auto& op = out.partitions.emplace_back();
      op.partition_index = part.partition_index;
      op.error_code = p::code(cr.entries[i].error);
      ++i;
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
