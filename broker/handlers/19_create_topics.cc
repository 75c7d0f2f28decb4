// CreateTopics (key 19): validates each topic as Kafka's controller does
// (name, partitions, replication factor against the live brokers, configs)
// and creates it unless ValidateOnly. v5+ responses describe the new topic's
// partitions, replication factor and every config; v7 adds its topic id.
//
// One request is bounded as Kafka's controller bounds it (RequestBound in
// topic_frontend.h): over it, every topic is answered POLICY_VIOLATION and
// nothing is created. The creation itself runs off the event loop.
// Each topic needs CREATE on the cluster or on the topic, as Kafka's
// handleCreateTopicsRequest (TOPIC_AUTHORIZATION_FAILED); v5+ describe the
// new topic only with DESCRIBE_CONFIGS on it (else TopicConfigErrorCode
// TOPIC_AUTHORIZATION_FAILED and no configs).
#include <map>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Result_ = p::CreateTopicsResponse::CreatableTopicResult;

Result_ failed(const std::string& name, ErrorCode code, std::string message) {
  Result_ r;
  r.name = name;
  r.error_code = p::code(code);
  r.error_message = std::move(message);
  return r;
}

// Manual assignments, checked as Kafka's controller does: partitions
// numbered 0..n-1, every replica a registered broker, none twice, and one
// replication factor for all. Fills in the count, the factor and the lists.
TopicError check_assignments(const p::CreateTopicsRequest::CreatableTopic& t, const cluster::MetadataImage& image,
                             int32_t& partitions, int16_t& replication_factor, ReplicaAssignment& replicas) {
  if (t.assignments.empty()) return {};
  if (t.num_partitions != -1 || t.replication_factor != -1)
    return {ErrorCode::invalid_request,
            "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time."};
  for (size_t i = 0; i < t.assignments.size(); ++i) {
    const auto& a = t.assignments[i];
    if (a.partition_index != static_cast<int32_t>(i))
      return {ErrorCode::invalid_replica_assignment, "Partitions should be a consecutive 0-based integer sequence"};
    if (auto e = check_replica_list(a.broker_ids, image); !e.ok()) return e;
    if (i > 0 && a.broker_ids.size() != t.assignments[0].broker_ids.size())
      return {ErrorCode::invalid_replica_assignment, "All partitions should have the same number of replicas"};
    auto& list = replicas.emplace_back();
    for (int32_t id : a.broker_ids) list.push_back(NodeId(id));
  }
  partitions = static_cast<int32_t>(t.assignments.size());
  replication_factor = static_cast<int16_t>(t.assignments[0].broker_ids.size());
  return {};
}

// Kafka's validateTotalNumberOfPartitions: before anything else, over the
// topics not named twice, invalid counts left out.
int64_t requested_partitions(const p::CreateTopicsRequest& req, const std::map<std::string, int>& counts,
                             int32_t default_partitions) {
  int64_t total = 0;
  for (const auto& t : req.topics) {
    if (counts.at(t.name) > 1) continue;
    if (!t.assignments.empty()) total += static_cast<int64_t>(t.assignments.size());
    else if (t.num_partitions == -1) total += default_partitions;
    else if (t.num_partitions > 0) total += t.num_partitions;
  }
  return total;
}

p::CreateTopicsResponse refuse_all(const p::CreateTopicsRequest& req, const TopicError& e) {
  p::CreateTopicsResponse resp;
  for (const auto& t : req.topics) resp.topics.push_back(failed(t.name, e.code, e.message));
  return resp;
}

struct Valid {
  const p::CreateTopicsRequest::CreatableTopic* request;
  TopicOverrides overrides;
  ReplicaAssignment assignment;
  size_t result;  // its index in the response
  int32_t partitions;
  int16_t replication_factor;
};

}  // namespace

template <>
awaitable<p::CreateTopicsResponse> handle<p::CreateTopicsApi>(RequestContext& ctx, p::CreateTopicsRequest& req) {
  Broker& b = ctx.broker;
  TopicFrontend& topics = b.topic_frontend();
  const int16_t v = ctx.api_version();
  p::CreateTopicsResponse resp;
  std::map<std::string, int> counts;
  for (const auto& t : req.topics) ++counts[t.name];
  if (requested_partitions(req, counts, b.config().typed().num_partitions) > RequestBound::kMaxPartitions)
    co_return refuse_all(req, RequestBound::too_many_partitions());

  std::vector<Valid> valid;
  int64_t records = 0;
  const bool cluster_create = authorized_on_cluster(ctx, AclOperation::create);
  for (const auto& t : req.topics) {
    if (counts[t.name] > 1) {
      resp.topics.push_back(failed(t.name, ErrorCode::invalid_request, "Duplicate topic name."));
      continue;
    }
    if (!cluster_create && !authorized(ctx, AclOperation::create, ResourceType::topic, t.name)) {
      resp.topics.push_back(failed(t.name, ErrorCode::topic_authorization_failed, "Authorization failed."));
      continue;
    }
    TopicOverrides overrides;
    bool null_config = false;
    for (const auto& c : t.configs) {
      if (!c.value) null_config = true;
      else overrides[c.name] = *c.value;
    }
    if (null_config) {
      resp.topics.push_back(failed(t.name, ErrorCode::invalid_config, "Null value not supported for topic configs"));
      continue;
    }
    int32_t partitions = t.num_partitions;
    int16_t rf = t.replication_factor;
    ReplicaAssignment assignment;
    TopicError err = check_assignments(t, *b.metadata_cache(), partitions, rf, assignment);
    if (err.ok()) err = topics.validate_new_topic(t.name, partitions, rf, overrides);
    if (!err.ok()) {
      resp.topics.push_back(failed(t.name, err.code, err.message));
      continue;
    }
    records += RequestBound::records_of_new_topic(partitions, overrides.size());
    Result_ r;
    r.name = t.name;
    r.error_message = std::nullopt;  // Kafka answers null, not "", when there is no error
    r.num_partitions = partitions;
    r.replication_factor = rf;
    if (v >= 5 && !authorized(ctx, AclOperation::describe_configs, ResourceType::topic, t.name)) {
      // Kafka describes the new topic only to whom may DESCRIBE_CONFIGS it.
      r.num_partitions = -1;
      r.replication_factor = -1;
      r.configs = std::nullopt;
      r.topic_config_error_code = p::code(ErrorCode::topic_authorization_failed);
    } else if (v >= 5) {
      r.configs.emplace();
      for (const auto& e : describe_topic_configs(b.config(), overrides))
        r.configs->push_back({e.name, e.value, e.read_only, static_cast<int8_t>(e.source), e.sensitive, {}});
    }
    valid.push_back({&t, std::move(overrides), std::move(assignment), resp.topics.size(), partitions, rf});
    resp.topics.push_back(std::move(r));
  }
  // Kafka counts the records of the topics that passed, ValidateOnly too.
  if (records > RequestBound::kMaxRecords) co_return refuse_all(req, RequestBound::too_many_records());
  if (req.validate_only) co_return resp;

  for (auto& t : valid) {
    Result_& r = resp.topics[t.result];
    CreatedTopic created = co_await topics.create(t.request->name, t.partitions, std::move(t.overrides),
                                                  t.replication_factor, std::move(t.assignment));
    if (!created.error.ok()) {
      RLOG_ERROR("creating topic %s: %s", r.name.c_str(), created.error.message.c_str());
      r = failed(r.name, created.error.code, created.error.message);
      continue;
    }
    r.topic_id = created.topic->id;
  }
  co_return resp;
}

}  // namespace runnel::broker
