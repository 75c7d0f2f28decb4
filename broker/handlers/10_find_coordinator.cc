// FindCoordinator (key 10): which broker coordinates a group (key type 0)
// or a transactional id (1). With one broker the answer is this node, as
// the metadata cache's image registers it, for the listener the request
// arrived on. In a cluster, as Kafka's KafkaApis.getCoordinator: the leader
// of the group's __consumer_offsets partition, if it is alive (registered,
// not fenced) and has that listener, else COORDINATOR_NOT_AVAILABLE; a
// cluster without the topic starts its creation and answers
// COORDINATOR_NOT_AVAILABLE meanwhile. v0-3 carry one key; v4+ a batch of
// keys, each with its own error. A transactional id (1) needs DESCRIBE on it
// (TRANSACTIONAL_ID_AUTHORIZATION_FAILED); __transaction_state is created on
// the first such request, and its partition's leader is the id's
// coordinator as a group's is. Share groups (2) are refused. A group needs
// DESCRIBE (GROUP_AUTHORIZATION_FAILED), as Kafka.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/transaction_log_format.h"
#include "broker/transaction/transaction_service.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;

struct Answer {
  ErrorCode error = ErrorCode::none;
  std::optional<std::string> message;
};

Answer coordinator_not_available() { return {ErrorCode::coordinator_not_available, "The coordinator is not available."}; }

// The coordinator: this node, at the endpoint a client on `listener` uses.
struct Node {
  int32_t id = -1;
  std::string host;
  int32_t port = -1;
};

// The leader of `partition` of `topic`, at the endpoint a client on
// `listener` uses, if it is alive.
Answer leader_of(Broker& b, const cluster::TopicImage& topic, int32_t partition, const std::string& listener,
                 Node& node) {
  const cluster::MetadataImage& image = *b.metadata_cache();
  const cluster::PartitionRegistration* reg = topic.partition(PartitionId(partition));
  if (!reg || !reg->has_leader()) return coordinator_not_available();
  const cluster::BrokerRegistration* leader = image.broker(reg->leader);
  const cluster::BrokerEndpoint* e = leader && !leader->fenced ? endpoint_for(*leader, listener) : nullptr;
  if (!e) return coordinator_not_available();
  node = {leader->id.value(), e->host, e->port};
  return {};
}

Answer group_in_cluster(Broker& b, const std::string& group_id, const std::string& listener, Node& node) {
  auto topic = b.metadata_cache()->topic(group::kOffsetsTopic);
  if (!topic) {
    b.groups().request_offsets_topic();
    return coordinator_not_available();
  }
  const auto partitions = static_cast<int32_t>(topic->partitions.size());
  return leader_of(b, *topic, group::offsets_partition_for(group_id, partitions), listener, node);
}

// handle<> asked for __transaction_state's creation already.
Answer transaction_in_cluster(Broker& b, const std::string& transactional_id, const std::string& listener,
                              Node& node) {
  auto topic = b.metadata_cache()->topic(transaction::kTransactionStateTopic);
  if (!topic) return coordinator_not_available();
  const auto partitions = static_cast<int32_t>(topic->partitions.size());
  return leader_of(b, *topic, transaction::transaction_partition_for(transactional_id, partitions), listener, node);
}

// This node, at the endpoint a client on `listener` uses, once `topic` exists.
Answer this_node(Broker& b, const char* topic, const std::string& listener, Node& node) {
  if (!b.topics().find(topic)) return coordinator_not_available();
  const cluster::BrokerRegistration* self = b.metadata_cache()->broker(NodeId(b.node_id()));
  const cluster::BrokerEndpoint* e = self ? endpoint_for(*self, listener) : nullptr;
  if (!e) return coordinator_not_available();
  node = {self->id.value(), e->host, e->port};
  return {};
}

Answer find(const RequestContext& ctx, int8_t key_type, const std::string& key, Node& node) {
  Broker& b = ctx.broker;
  const std::string& listener = ctx.listener_name;
  if (key_type == 0 && !authorized(ctx, AclOperation::describe, ResourceType::group, key))
    return {ErrorCode::group_authorization_failed, "Group authorization failed."};
  if (key_type == 0 && b.in_cluster()) return group_in_cluster(b, key, listener, node);
  // Created when a group first needs it (handle<> waited for that).
  if (key_type == 0) return this_node(b, group::kOffsetsTopic, listener, node);
  if (key_type == 1) {
    if (!authorized(ctx, AclOperation::describe, ResourceType::transactional_id, key))
      return {ErrorCode::transactional_id_authorization_failed, "Transactional Id authorization failed."};
    if (b.in_cluster()) return transaction_in_cluster(b, key, listener, node);
    return this_node(b, transaction::kTransactionStateTopic, listener, node);
  }
  return {ErrorCode::invalid_request, "Unknown coordinator type: " + std::to_string(key_type)};
}

}  // namespace

template <>
awaitable<p::FindCoordinatorResponse> handle<p::FindCoordinatorApi>(RequestContext& ctx, p::FindCoordinatorRequest& req) {
  Broker& b = ctx.broker;
  p::FindCoordinatorResponse resp;
  // Like Kafka, the offsets topic is created when a group first needs it;
  // a single node answers once it is there, its disk work off the loop.
  if (req.key_type == 0 && !b.in_cluster() && !b.topics().find(group::kOffsetsTopic))
    (void)co_await b.groups().offsets_topic_ready();
  if (req.key_type == 1) (void)co_await b.transactions().state_topic_ready();
  if (ctx.api_version() < 4) {
    Node node;
    Answer a = find(ctx, req.key_type, req.key, node);
    resp.error_code = p::code(a.error);
    resp.error_message = a.message;
    resp.node_id = node.id;
    resp.host = node.host;
    resp.port = node.port;
    co_return resp;
  }
  for (const auto& key : req.coordinator_keys) {
    Node node;
    Answer a = find(ctx, req.key_type, key, node);
    auto& c = resp.coordinators.emplace_back();
    c.key = key;
    c.node_id = node.id;
    c.host = node.host;
    c.port = node.port;
    c.error_code = p::code(a.error);
    c.error_message = a.message;
  }
  co_return resp;
}

}  // namespace runnel::broker
