// CreatePartitions (key 37, KIP-195): raises topics' partition counts; a
// count can only grow. v1 changes only throttling, v2 is flexible, v3 may
// answer THROTTLING_QUOTA_EXCEEDED (Runnel has no quotas).
//
// As Kafka's controller: a topic named twice gets one INVALID_REQUEST
// result (listed first); a count equal to or below the current one is
// INVALID_PARTITIONS; manual assignments must give one replica list per
// new partition, each naming only registered brokers, each once, and as
// many as the topic's replication factor. ValidateOnly checks without
// creating.
#include <algorithm>
#include <map>
#include <set>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Topic_ = p::CreatePartitionsRequest::CreatePartitionsTopic;
using Result_ = p::CreatePartitionsResponse::CreatePartitionsTopicResult;

Result_ result(const std::string& name, const TopicError& e) {
  Result_ r;
  r.name = name;
  r.error_code = p::code(e.code);
  if (!e.ok() && !e.message.empty()) r.error_message = e.message;
  return r;
}

TopicError check_topic(const TopicTable& topics, const Topic_& t, const cluster::MetadataImage& image,
                       ReplicaAssignment& replicas) {
  auto topic = topics.find(t.name);
  if (!topic) return {ErrorCode::unknown_topic_or_partition, ""};
  if (auto e = TopicFrontend::check_new_count(*topic, t.count); !e.ok()) return e;
  const int32_t current = topic->partition_count;
  const int64_t additional = int64_t{t.count} - current;
  if (t.assignments) {
    if (static_cast<int64_t>(t.assignments->size()) != additional)
      return {ErrorCode::invalid_replica_assignment, "Attempted to add " + std::to_string(additional) +
                                                         " additional partition(s), but only " +
                                                         std::to_string(t.assignments->size()) + " assignment(s) were specified."};
    const auto* described = image.topic(t.name).get();
    const size_t factor = described && !described->partitions.empty() ? described->partitions[0].replicas.size() : 1;
    for (const auto& a : *t.assignments) {
      if (auto e = check_replica_list(a.broker_ids, image); !e.ok()) return e;
      if (a.broker_ids.size() != factor)
        return {ErrorCode::invalid_replica_assignment,
                "The manual partition assignment includes a partition with " + std::to_string(a.broker_ids.size()) +
                    " replica(s), but this is not consistent with previous partitions, which have " +
                    std::to_string(factor) + " replica(s)."};
      auto& list = replicas.emplace_back();
      for (int32_t id : a.broker_ids) list.push_back(NodeId(id));
    }
  }
  return {};
}

}  // namespace

template <>
awaitable<p::CreatePartitionsResponse> handle<p::CreatePartitionsApi>(RequestContext& ctx, p::CreatePartitionsRequest& req) {
  Broker& b = ctx.broker;
  p::CreatePartitionsResponse resp;
  std::map<std::string, int> counts;
  for (const auto& t : req.topics) ++counts[t.name];
  std::set<std::string> reported;
  for (const auto& t : req.topics)
    if (counts[t.name] > 1 && reported.insert(t.name).second)
      resp.results.push_back(result(t.name, {ErrorCode::invalid_request, "Duplicate topic name."}));

  std::vector<std::pair<const Topic_*, ReplicaAssignment>> valid;
  std::vector<Result_> results;
  int64_t new_partitions = 0;
  for (const auto& t : req.topics) {
    if (counts[t.name] > 1) continue;
    // Kafka: ALTER on the topic, before anything about it is checked.
    if (!authorized(ctx, AclOperation::alter, ResourceType::topic, t.name)) {
      results.push_back(result(t.name, {ErrorCode::topic_authorization_failed, "Authorization failed."}));
      continue;
    }
    ReplicaAssignment assignment;
    TopicError e = check_topic(b.topics(), t, *b.metadata_cache(), assignment);
    if (e.ok()) {
      valid.emplace_back(&t, std::move(assignment));
      new_partitions += int64_t{t.count} - int64_t{b.topics().find(t.name)->partition_count};
    }
    results.push_back(result(t.name, e));
  }
  // One PartitionRecord per new partition: over Kafka's bound the whole
  // operation fails, every topic with it.
  if (new_partitions > RequestBound::kMaxRecords) {
    for (auto& r : results) r = result(r.name, RequestBound::too_many_records());
    valid.clear();
  }
  if (!req.validate_only) {
    for (auto& [t, assignment] : valid) {
      TopicError e = co_await b.topic_frontend().add_partitions(t->name, t->count, std::move(assignment));
      if (!e.ok())
        for (auto& r : results)
          if (r.name == t->name) r = result(t->name, e);
    }
  }
  for (auto& r : results) resp.results.push_back(std::move(r));
  co_return resp;
}

}  // namespace runnel::broker
