// DescribeTopicPartitions (key 75, KIP-966): topics and their partitions,
// paged. Kafka 4.x's admin client describes topics by name with it (and
// falls back to Metadata only when a broker lacks it). Only v0.
//
// As Kafka's DescribeTopicPartitionsRequestHandler and KRaftMetadataCache:
// - the topics are the request's (each name once), or every topic when the
//   list is empty, those sorting before the cursor's topic left out, and
//   answered in name order;
// - a cursor whose topic is not among the requested topics is
//   INVALID_REQUEST for every requested topic (Kafka throws, and its error
//   response names each requested topic with the error and nothing else);
// - the cursor's topic starts at the cursor's partition, every other at 0;
// - at most min(ResponsePartitionLimit, 2000) partitions come back (2000 is
//   Kafka's max.request.partition.size.limit, not configurable here). When
//   a topic is cut short, NextCursor names its first partition left out;
//   when the limit is used up exactly, NextCursor names the next topic at
//   partition 0 (which need not exist);
// - a requested topic not in the image is UNKNOWN_TOPIC_OR_PARTITION, or
//   INVALID_TOPIC_EXCEPTION if its name is illegal; with an empty list
//   there are none;
// - partitions carry no error code, even without a leader (a leaderless
//   partition has leader -1 and, when its log dir is offline, its replica
//   in OfflineReplicas); the eligible leader replicas and the last known
//   ELR are empty lists, what Kafka sends without ELR (never null: Kafka's
//   admin client reads them unchecked);
// - every topic answered carries the operations the principal may perform
//   on it (every one a topic supports without an authorizer);
// - as Kafka: listing all topics leaves out those without DESCRIBE, a topic
//   named without it is TOPIC_AUTHORIZATION_FAILED.
#include <algorithm>
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/described_partition.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Response = p::DescribeTopicPartitionsResponse;
using Topic_ = Response::DescribeTopicPartitionsResponseTopic;
using Partition_ = Topic_::DescribeTopicPartitionsResponsePartition;

// Kafka's max.request.partition.size.limit default: the cap on any request's limit.
constexpr int32_t kMaxRequestPartitionSizeLimit = 2000;

Partition_ describe(const cluster::TopicImage& t, PartitionId id, const cluster::MetadataImage& image,
                    const replication::ReplicaManager& replicas) {
  DescribedPartition d = describe_partition(t, id, image, replicas);
  Partition_ out;
  out.partition_index = id.value();
  out.leader_id = d.leader_id;
  out.leader_epoch = d.leader_epoch;
  out.replica_nodes = std::move(d.replica_nodes);
  out.isr_nodes = std::move(d.isr_nodes);
  out.eligible_leader_replicas.emplace();
  out.last_known_elr.emplace();
  out.offline_replicas = std::move(d.offline_replicas);
  return out;
}

Topic_ unknown_topic(const std::string& name) {
  Topic_ out;
  out.name = name;
  out.error_code = p::code(TopicTable::validate_name(name).ok() ? ErrorCode::unknown_topic_or_partition
                                                                : ErrorCode::invalid_topic_exception);
  out.is_internal = cluster::is_internal_topic(name);
  return out;
}

Response invalid_request(const p::DescribeTopicPartitionsRequest& req) {
  Response resp;
  for (const auto& rt : req.topics) {
    Topic_ t;
    t.name = rt.name;
    t.error_code = p::code(ErrorCode::invalid_request);
    resp.topics.push_back(std::move(t));
  }
  return resp;
}

}  // namespace

template <>
awaitable<Response> handle<p::DescribeTopicPartitionsApi>(RequestContext& ctx, p::DescribeTopicPartitionsRequest& req) {
  const cluster::ImagePtr image = ctx.broker.metadata_cache().image();
  const replication::ReplicaManager& rm = ctx.broker.replica_manager();
  const bool all_topics = req.topics.empty();
  const std::string cursor_topic = req.cursor ? req.cursor->topic_name : std::string();

  std::set<std::string> names;  // sorted, each once: Kafka's order
  if (all_topics) {
    for (const auto& [name, t] : image->topics())
      if (name >= cursor_topic) names.insert(name);
  } else {
    for (const auto& rt : req.topics)
      if (rt.name >= cursor_topic) names.insert(rt.name);
    if (req.cursor && !names.contains(cursor_topic)) co_return invalid_request(req);
  }

  Response resp;
  int32_t remaining = std::min(req.response_partition_limit, kMaxRequestPartitionSizeLimit);
  for (const std::string& name : names) {
    if (remaining == 0) {
      // Every partition before this topic fits exactly.
      resp.next_cursor = p::DescribeTopicPartitionsCursor{name, 0, {}};
      break;
    }
    if (remaining < 0) continue;  // a negative limit: Kafka answers nothing
    if (!authorized(ctx, AclOperation::describe, ResourceType::topic, name)) {
      if (!all_topics) {
        Topic_ refused;
        refused.name = name;
        refused.error_code = p::code(ErrorCode::topic_authorization_failed);
        resp.topics.push_back(std::move(refused));
      }
      continue;
    }
    const cluster::TopicPtr t = image->topic(name);
    if (!t) {
      if (!all_topics) resp.topics.push_back(unknown_topic(name));
      continue;
    }
    Topic_ out;
    out.name = name;
    out.topic_id = t->id;
    out.is_internal = t->internal;
    const auto count = static_cast<int32_t>(t->partitions.size());
    const int32_t first = name == cursor_topic ? req.cursor->partition_index : 0;
    const int32_t end = static_cast<int32_t>(std::min<int64_t>(count, int64_t{first} + remaining));
    for (int32_t i = std::max(first, 0); i < end; ++i) out.partitions.push_back(describe(*t, PartitionId(i), *image, rm));
    remaining -= static_cast<int32_t>(out.partitions.size());
    resp.topics.push_back(std::move(out));
    if (end < count) {
      resp.next_cursor = p::DescribeTopicPartitionsCursor{name, end, {}};
      break;
    }
  }
  for (auto& topic : resp.topics)
    if (topic.error_code != p::code(ErrorCode::topic_authorization_failed))
      topic.topic_authorized_operations = authorized_operations(ctx, ResourceType::topic, *topic.name);
  co_return resp;
}

}  // namespace runnel::broker
