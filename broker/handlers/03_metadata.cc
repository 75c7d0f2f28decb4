// Metadata (key 3): brokers, topics, partitions and their leaders.
// v0 asks for every topic with an empty list; v1+ with a null list. A
// partition whose log dir went offline has no leader (LEADER_NOT_AVAILABLE)
// and its replica in offline_replicas (v5+), as Kafka reports it. Unknown
// topics are created when both the request (v4+; always before) and
// auto.create.topics.enable allow it. v10+ topics may be named by id.
// Kafka sends one request's auto-created topics to its controller as one
// CreateTopics, so they share its bound (RequestBound): over it nothing is
// created and they are answered LEADER_NOT_AVAILABLE, Kafka's answer while
// (and after failing) creating. So is a topic whose creation is in flight.
// Authorized operations (v8+) are reported when asked, as Kafka does (every
// operation without an authorizer): kafka-python always asks, and reads
// INT32_MIN's bit 31 as an operation it does not know.
// With an authorizer, as Kafka's handleTopicMetadataRequest: listing all
// topics leaves out those without DESCRIBE; a topic named without DESCRIBE
// is TOPIC_AUTHORIZATION_FAILED; auto-creating one needs CREATE on the
// cluster or on the topic, else it is TOPIC_AUTHORIZATION_FAILED too.
//
// Brokers, topics, leaders, epochs, replicas and ISR come from the metadata
// cache's image; whether a replica's log dir is offline is this broker's own
// state, from the replica manager. The controller id is a live broker, not
// etcd's elected controller (advertised_controller.h says why).
#include "broker/advertised_controller.h"
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/described_partition.h"
#include "broker/handlers/handlers.h"
#include "broker/logging.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Topic_ = p::MetadataResponse::MetadataResponseTopic;

Topic_ describe(const cluster::TopicImage& t, const cluster::MetadataImage& image,
                const replication::ReplicaManager& replicas) {
  Topic_ out;
  out.name = t.name;
  out.topic_id = t.id;
  out.is_internal = t.internal;
  for (size_t i = 0; i < t.partitions.size(); ++i) {
    const PartitionId id(static_cast<int32_t>(i));
    DescribedPartition d = describe_partition(t, id, image, replicas);
    p::MetadataResponse::MetadataResponseTopic::MetadataResponsePartition mp;
    mp.partition_index = id.value();
    mp.leader_id = d.leader_id;
    mp.leader_epoch = d.leader_epoch;
    mp.replica_nodes = std::move(d.replica_nodes);
    mp.isr_nodes = std::move(d.isr_nodes);
    mp.offline_replicas = std::move(d.offline_replicas);
    // A partition without a leader (its log dir offline, its ISR gone, or
    // mid-election) is LEADER_NOT_AVAILABLE in Metadata, and clients ask again.
    if (d.leader_id == -1) mp.error_code = p::code(ErrorCode::leader_not_available);
    out.partitions.push_back(std::move(mp));
  }
  return out;
}

Topic_ error_topic(std::optional<std::string> name, p::Uuid id, ErrorCode code) {
  Topic_ out;
  out.name = std::move(name);
  out.topic_id = id;
  out.error_code = p::code(code);
  return out;
}

// Whether a partition of `t` is led by a broker other than `self`.
bool led_elsewhere(const cluster::TopicImage& t, NodeId self) {
  for (const auto& p : t.partitions)
    if (p.leader != self) return true;
  return false;
}

// Kafka fills in the topic operations for every topic it answers by name
// (found, created or not), not for unknown topic ids.
void report_authorized_operations(const RequestContext& ctx, p::MetadataResponse& resp, const p::MetadataRequest& req) {
  // Reported only to a principal that may DESCRIBE the cluster, as Kafka's.
  if (req.include_cluster_authorized_operations)
    resp.cluster_authorized_operations = authorized_on_cluster(ctx, AclOperation::describe)
                                             ? authorized_operations(ctx, ResourceType::cluster, security::kClusterName)
                                             : 0;
  if (!req.include_topic_authorized_operations) return;
  for (auto& t : resp.topics) {
    if (t.name) t.topic_authorized_operations = authorized_operations(ctx, ResourceType::topic, *t.name);
  }
}

bool may_describe(const RequestContext& ctx, const std::string& topic) {
  return authorized(ctx, AclOperation::describe, ResourceType::topic, topic);
}

awaitable<p::MetadataResponse> answer_metadata(RequestContext& ctx, p::MetadataRequest& req) {
  Broker& b = ctx.broker;
  const replication::ReplicaManager& rm = b.replica_manager();
  const int16_t v = ctx.api_version();
  p::MetadataResponse resp;
  // Held across the creations below: the brokers and the topics found
  // before them are answered from one image.
  const cluster::ImagePtr image = b.metadata_cache().image();
  for (const auto& [id, broker] : image->brokers()) {
    // The live brokers, each at its endpoint for the request's listener.
    if (broker.fenced) continue;
    if (const cluster::BrokerEndpoint* e = endpoint_for(broker, ctx.listener_name))
      resp.brokers.push_back({id.value(), e->host, e->port, broker.rack, {}});
  }
  resp.cluster_id = image->cluster_id();
  resp.controller_id = advertised_controller(*image, NodeId(b.node_id())).value();

  const bool all_topics = !req.topics || (v == 0 && req.topics->empty());
  if (all_topics) {
    for (const auto& [name, t] : image->topics())
      if (may_describe(ctx, name)) resp.topics.push_back(describe(*t, *image, rm));
    co_return resp;
  }

  const bool may_create = req.allow_auto_topic_creation && b.config().typed().auto_create_topics_enable;
  std::vector<size_t> to_create;  // indexes into resp.topics
  for (const auto& rt : *req.topics) {
    if (!rt.name) {
      // Named by id (v10+).
      auto t = image->topic(rt.topic_id);
      if (t && !may_describe(ctx, t->name))
        resp.topics.push_back(error_topic(std::nullopt, rt.topic_id, ErrorCode::topic_authorization_failed));
      else
        resp.topics.push_back(t ? describe(*t, *image, rm)
                                : error_topic(std::nullopt, rt.topic_id, ErrorCode::unknown_topic_id));
      continue;
    }
    const std::string& name = *rt.name;
    if (!may_describe(ctx, name)) {
      resp.topics.push_back(error_topic(name, {}, ErrorCode::topic_authorization_failed));
      continue;
    }
    if (auto t = image->topic(name)) {
      resp.topics.push_back(describe(*t, *image, rm));
      continue;
    }
    if (!may_create || TopicTable::is_internal(name)) {
      resp.topics.push_back(error_topic(name, {}, ErrorCode::unknown_topic_or_partition));
      continue;
    }
    if (!authorized_on_cluster(ctx, AclOperation::create) &&
        !authorized(ctx, AclOperation::create, ResourceType::topic, name)) {
      resp.topics.push_back(error_topic(name, {}, ErrorCode::topic_authorization_failed));
      continue;
    }
    if (b.topic_frontend().in_flight(name)) {
      resp.topics.push_back(error_topic(name, {}, ErrorCode::leader_not_available));
      continue;
    }
    int32_t partitions = -1;
    int16_t rf = -1;
    TopicError err = b.topic_frontend().validate_new_topic(name, partitions, rf, {});
    resp.topics.push_back(error_topic(name, {}, err.code));
    if (err.ok()) to_create.push_back(resp.topics.size() - 1);
  }
  const int64_t partitions = b.config().typed().num_partitions;
  const int64_t n = static_cast<int64_t>(to_create.size());
  if (n * partitions > RequestBound::kMaxPartitions ||
      n * RequestBound::records_of_new_topic(static_cast<int32_t>(partitions), 0) > RequestBound::kMaxRecords) {
    RLOG_WARN("not auto-creating %lld topic(s) of %lld partition(s) each: over Kafka's bound of one request",
              static_cast<long long>(n), static_cast<long long>(partitions));
    for (size_t i : to_create) resp.topics[i].error_code = p::code(ErrorCode::leader_not_available);
    co_return resp;
  }
  for (size_t i : to_create) {
    std::string name = *resp.topics[i].name;
    CreatedTopic created = co_await b.topic_frontend().create(name, static_cast<int32_t>(partitions), {});
    if (!created.error.ok() && created.error.code != ErrorCode::topic_already_exists) {
      RLOG_ERROR("auto-creating topic %s: %s", name.c_str(), created.error.message.c_str());
      resp.topics[i] = error_topic(name, {}, created.error.code);
      continue;
    }
    // Created, by this request or by another meanwhile: the image the
    // creation published says how it stands.
    const cluster::ImagePtr now = b.metadata_cache().image();
    auto t = now->topic(name);
    if (t && b.in_cluster() && led_elsewhere(*t, NodeId(b.node_id()))) {
      // Kafka's brokers answer an auto-created topic as not available yet
      // and the client asks again after its backoff. Here this broker has
      // taken its own partitions, but another leader may not have: a Produce
      // sent there at once would be refused, and at acks=0 lost unseen.
      resp.topics[i] = error_topic(name, {}, ErrorCode::leader_not_available);
      continue;
    }
    resp.topics[i] = t ? describe(*t, *now, rm) : error_topic(name, {}, ErrorCode::leader_not_available);
  }
  co_return resp;
}

}  // namespace

template <>
awaitable<p::MetadataResponse> handle<p::MetadataApi>(RequestContext& ctx, p::MetadataRequest& req) {
  p::MetadataResponse resp = co_await answer_metadata(ctx, req);
  report_authorized_operations(ctx, resp, req);
  co_return resp;
}

}  // namespace runnel::broker
