// CreatePartitions (key 37, KIP-195): raises topics' partition counts; a
// count can only grow. v1 changes only throttling, v2 is flexible, v3 may
// answer THROTTLING_QUOTA_EXCEEDED (Runnel has no quotas).
//
// As Kafka's controller: a topic named twice gets one INVALID_REQUEST
// result (listed first); a count equal to or below the current one is
// INVALID_PARTITIONS; manual assignments must give one replica list per
// new partition, each naming only registered brokers (this node) once and
// as many as the topic's replication factor (1). ValidateOnly checks
// without creating.
#include <algorithm>
#include <map>
#include <set>

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

TopicError check_assignment(const std::vector<int32_t>& replicas, int32_t node_id) {
  if (replicas.empty()) return {ErrorCode::invalid_replica_assignment, "The manual partition assignment includes an empty replica list."};
  std::vector<int32_t> sorted = replicas;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] != node_id)
      return {ErrorCode::invalid_replica_assignment, "The manual partition assignment includes broker " +
                                                         std::to_string(sorted[i]) + ", but no such broker is registered."};
    if (i > 0 && sorted[i] == sorted[i - 1])
      return {ErrorCode::invalid_replica_assignment, "The manual partition assignment includes the broker " +
                                                         std::to_string(sorted[i]) + " more than once."};
  }
  return {};  // one replica, this node: the topic's replication factor
}

TopicError check_topic(const TopicTable& topics, const Topic_& t, int32_t node_id) {
  auto topic = topics.find(t.name);
  if (!topic) return {ErrorCode::unknown_topic_or_partition, ""};
  if (auto e = TopicFrontend::check_new_count(*topic, t.count); !e.ok()) return e;
  const int32_t current = static_cast<int32_t>(topic->partitions.size());
  const int64_t additional = int64_t{t.count} - current;
  if (t.assignments) {
    if (static_cast<int64_t>(t.assignments->size()) != additional)
      return {ErrorCode::invalid_replica_assignment, "Attempted to add " + std::to_string(additional) +
                                                         " additional partition(s), but only " +
                                                         std::to_string(t.assignments->size()) + " assignment(s) were specified."};
    for (const auto& a : *t.assignments)
      if (auto e = check_assignment(a.broker_ids, node_id); !e.ok()) return e;
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

  std::vector<const Topic_*> valid;
  std::vector<Result_> results;
  int64_t new_partitions = 0;
  for (const auto& t : req.topics) {
    if (counts[t.name] > 1) continue;
    TopicError e = check_topic(b.topics(), t, b.node_id());
    if (e.ok()) {
      valid.push_back(&t);
      new_partitions += int64_t{t.count} - static_cast<int64_t>(b.topics().find(t.name)->partitions.size());
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
    for (const Topic_* t : valid) {
      TopicError e = co_await b.topic_frontend().add_partitions(t->name, t->count);
      if (!e.ok())
        for (auto& r : results)
          if (r.name == t->name) r = result(t->name, e);
    }
  }
  for (auto& r : results) resp.results.push_back(std::move(r));
  co_return resp;
}

}  // namespace runnel::broker
