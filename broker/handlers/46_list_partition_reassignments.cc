// ListPartitionReassignments (key 46, KIP-455): the partitions being moved,
// each with its replicas (the target's followed by those being removed)
// and the replicas being added and removed. A null topic list means every
// partition; otherwise those asked for that are being moved, and a topic
// or partition that does not exist is left out, as Kafka's controller
// leaves it. Any broker answers from its image (Kafka's brokers forward
// to the controller, so none answers NOT_CONTROLLER).
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"

namespace runnel::broker {

namespace {

using Response_ = p::ListPartitionReassignmentsResponse;
using Topic_ = Response_::OngoingTopicReassignment;
using Partition_ = Topic_::OngoingPartitionReassignment;

std::vector<int32_t> raw(const std::vector<NodeId>& nodes) {
  std::vector<int32_t> out;
  for (NodeId n : nodes) out.push_back(n.value());
  return out;
}

void add_if_moving(Topic_& out, const cluster::TopicImage& topic, int32_t index) {
  const cluster::PartitionRegistration* p = topic.partition(PartitionId(index));
  if (!p || !p->reassigning()) return;
  Partition_ moving;
  moving.partition_index = index;
  moving.replicas = raw(p->replicas);
  moving.adding_replicas = raw(p->adding_replicas);
  moving.removing_replicas = raw(p->removing_replicas);
  out.partitions.push_back(std::move(moving));
}

}  // namespace

template <>
awaitable<Response_> handle<p::ListPartitionReassignmentsApi>(RequestContext& ctx,
                                                             p::ListPartitionReassignmentsRequest& req) {
  const cluster::ImagePtr image = ctx.broker.metadata_cache().image();
  Response_ resp;
  if (!authorized_on_cluster(ctx, AclOperation::describe)) {
    resp.error_code = p::code(p::ErrorCode::cluster_authorization_failed);
    resp.error_message = "Cluster authorization failed.";
    co_return resp;
  }
  auto answer = [&resp](Topic_ t) {
    if (!t.partitions.empty()) resp.topics.push_back(std::move(t));
  };
  if (!req.topics) {
    for (const auto& [name, topic] : image->topics()) {
      Topic_ t;
      t.name = name;
      for (size_t i = 0; i < topic->partitions.size(); ++i) add_if_moving(t, *topic, static_cast<int32_t>(i));
      answer(std::move(t));
    }
    co_return resp;
  }
  for (const auto& asked : *req.topics) {
    auto topic = image->topic(asked.name);
    if (!topic) continue;
    Topic_ t;
    t.name = asked.name;
    for (int32_t index : asked.partition_indexes) add_if_moving(t, *topic, index);
    answer(std::move(t));
  }
  co_return resp;
}

}  // namespace runnel::broker
