// OffsetFetch (key 9): a group's committed offsets. v1-7 ask for one group
// (v2+ null topics = every committed partition, and a top-level error);
// v8+ batch several groups; v7+ RequireStable: a partition for which an
// open transaction holds an offset (TxnOffsetCommit) answers
// UNSTABLE_OFFSET_COMMIT, which the client retries; v10 names topics by id.
// Partitions without a committed offset answer offset -1.
// As Kafka's handleOffsetFetchRequest: DESCRIBE on the group (else
// GROUP_AUTHORIZATION_FAILED), and on each topic: a topic asked for without
// it answers TOPIC_AUTHORIZATION_FAILED, and "every committed partition"
// leaves such topics out.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using group::FetchedOffset;
using group::TopicPartition;

struct GroupOffsets {
  p::ErrorCode error = p::ErrorCode::none;
  std::vector<FetchedOffset> offsets;
  std::vector<TopicPartition> refused;  // asked for without DESCRIBE on the topic
};

bool may_describe_topic(const RequestContext& ctx, const std::string& topic) {
  return authorized(ctx, AclOperation::describe, ResourceType::topic, topic);
}

GroupOffsets fetch(const RequestContext& ctx, const std::string& group_id,
                   const std::optional<std::vector<TopicPartition>>& wanted, bool require_stable) {
  GroupOffsets g;
  if (!authorized(ctx, AclOperation::describe, ResourceType::group, group_id)) {
    g.error = p::ErrorCode::group_authorization_failed;
    return g;
  }
  std::optional<std::vector<TopicPartition>> allowed;
  if (wanted) {
    allowed.emplace();
    for (const auto& tp : *wanted) (may_describe_topic(ctx, tp.first) ? *allowed : g.refused).push_back(tp);
  }
  g.error = ctx.broker.groups().coordinator().fetch_offsets(group_id, allowed, g.offsets, require_stable);
  if (!wanted) std::erase_if(g.offsets, [&](const FetchedOffset& o) { return !may_describe_topic(ctx, o.topic); });
  return g;
}

// The refused partitions, one topic entry each time the topic changes.
template <typename Topics>
void add_refused(const std::vector<TopicPartition>& refused, Topics& topics) {
  for (size_t i = 0; i < refused.size(); ++i) {
    if (i == 0 || refused[i].first != refused[i - 1].first) topics.emplace_back().name = refused[i].first;
    auto& op = topics.back().partitions.emplace_back();
    op.partition_index = refused[i].second;
    op.committed_offset = -1;
    op.error_code = p::code(p::ErrorCode::topic_authorization_failed);
  }
}

// Offsets grouped by topic, in the order they came.
template <typename F>
void by_topic(const std::vector<FetchedOffset>& offsets, F&& emit) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const FetchedOffset*>> topics;
  for (auto& o : offsets) {
    if (!topics.count(o.topic)) order.push_back(o.topic);
    topics[o.topic].push_back(&o);
  }
  for (auto& t : order) emit(t, topics[t]);
}

}  // namespace

template <>
awaitable<p::OffsetFetchResponse> handle<p::OffsetFetchApi>(RequestContext& ctx, p::OffsetFetchRequest& req) {
  Broker& b = ctx.broker;
  const int16_t v = ctx.api_version();
  p::OffsetFetchResponse resp;
  if (v < 8) {
    std::optional<std::vector<TopicPartition>> wanted;
    if (req.topics) {
      wanted.emplace();
      for (auto& t : *req.topics)
        for (int32_t i : t.partition_indexes) wanted->push_back({t.name, i});
    }
    GroupOffsets g = fetch(ctx, req.group_id, wanted, v >= 7 && req.require_stable);
    if (g.error != p::ErrorCode::none && v >= 2) {
      resp.error_code = p::code(g.error);
      co_return resp;
    }
    if (g.error != p::ErrorCode::none && wanted)  // v1: the error goes on every partition
      for (auto& tp : *wanted) g.offsets.push_back({tp.first, tp.second, -1, -1, ""});
    by_topic(g.offsets, [&](const std::string& name, const std::vector<const FetchedOffset*>& parts) {
      auto& out = resp.topics.emplace_back();
      out.name = name;
      for (auto* o : parts) {
        auto& op = out.partitions.emplace_back();
        op.partition_index = o->partition;
        op.committed_offset = o->offset;
        op.committed_leader_epoch = o->leader_epoch;
        op.metadata = o->metadata;
        op.error_code = p::code(g.error != p::ErrorCode::none ? g.error : o->error);
      }
    });
    add_refused(g.refused, resp.topics);
    co_return resp;
  }
  for (auto& rg : req.groups) {
    auto& out = resp.groups.emplace_back();
    out.group_id = rg.group_id;
    std::optional<std::vector<TopicPartition>> wanted;
    std::map<std::string, p::Uuid> ids;  // v10: topic name -> id for the answer
    std::vector<std::pair<p::Uuid, std::vector<int32_t>>> unknown_ids;
    if (rg.topics) {
      wanted.emplace();
      for (auto& t : *rg.topics) {
        std::string name = t.name;
        if (v >= 10) {
          auto topic = b.topics().find(t.topic_id);
          if (!topic) {
            unknown_ids.emplace_back(t.topic_id, t.partition_indexes);
            continue;
          }
          name = topic->name;
          ids[name] = t.topic_id;
        }
        for (int32_t i : t.partition_indexes) wanted->push_back({name, i});
      }
    }
    GroupOffsets g = fetch(ctx, rg.group_id, wanted, req.require_stable);
    out.error_code = p::code(g.error);
    if (g.error != p::ErrorCode::none) continue;
    by_topic(g.offsets, [&](const std::string& name, const std::vector<const FetchedOffset*>& parts) {
      p::Uuid id;
      if (v >= 10) {
        auto topic = b.topics().find(name);
        if (!topic) return;  // offsets of a deleted topic cannot be named by id
        id = topic->id;
      }
      auto& ot = out.topics.emplace_back();
      ot.name = name;
      ot.topic_id = id;
      for (auto* o : parts) {
        auto& op = ot.partitions.emplace_back();
        op.partition_index = o->partition;
        op.committed_offset = o->offset;
        op.committed_leader_epoch = o->leader_epoch;
        op.metadata = o->metadata;
        op.error_code = p::code(o->error);
      }
    });
    add_refused(g.refused, out.topics);
    if (v >= 10)
      for (auto& t : out.topics)
        if (auto topic = b.topics().find(t.name); topic && t.topic_id == p::Uuid{}) t.topic_id = topic->id;
    for (auto& [id, parts] : unknown_ids) {
      auto& ot = out.topics.emplace_back();
      ot.topic_id = id;
      for (int32_t i : parts) {
        auto& op = ot.partitions.emplace_back();
        op.partition_index = i;
        op.committed_offset = -1;
        op.error_code = p::code(p::ErrorCode::unknown_topic_id);
      }
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
