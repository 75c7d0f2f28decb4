// AlterPartitionReassignments (key 45, KIP-455; v1's
// AllowReplicationFactorChange, KIP-860): `kafka-reassign-partitions
// --execute` and `--cancel`, the admin clients' alterPartitionReassignments.
// Each partition's move starts (or, with null replicas, is cancelled) as
// cluster/partition_reassignment.h decides, and the leader completes it
// once the new replicas are in its ISR.
//
// Kafka's brokers forward this request to the active controller (KRaft),
// so any broker accepts it and none answers NOT_CONTROLLER; here, as for
// ElectLeaders, the broker that is asked writes each partition by
// compare-and-swap on its key (a concurrent change of the partition wins,
// and this one is decided again over it), then answers once its image has
// the write. A single node's partitions live on it alone: moving them to
// it is no change, and any other broker id is not registered
// (INVALID_REPLICA_ASSIGNMENT), as on a one-broker Kafka.
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_change_writer.h"
#include "cluster/partition_reassignment.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Request_ = p::AlterPartitionReassignmentsRequest;
using Response_ = p::AlterPartitionReassignmentsResponse;
using TopicResult_ = Response_::ReassignableTopicResponse;
using PartitionResult_ = TopicResult_::ReassignablePartitionResponse;

using Outcome = PartitionChangeOutcome;

// The partition's new registration over `image`, or why there is none.
std::variant<cluster::PartitionRegistration, Outcome> decide(const cluster::MetadataImage& image,
                                                             const std::string& topic, int32_t partition,
                                                             const std::optional<std::vector<int32_t>>& replicas,
                                                             bool allow_rf_change) {
  const cluster::PartitionRegistration* current = image.partition(topic, PartitionId(partition));
  if (!current)
    return Outcome{ErrorCode::unknown_topic_or_partition,
                   image.topic(topic) ? "Unable to find partition " + topic + "-" + std::to_string(partition)
                                      : "Unable to find topic " + topic};
  auto live = [&image](NodeId n) { return image.is_live(n); };
  cluster::Reassigned decided;
  if (!replicas) {
    decided = cluster::cancel_reassignment(*current, live);
  } else {
    std::vector<NodeId> target;
    for (int32_t r : *replicas) target.push_back(NodeId(r));
    auto registered = [&image](NodeId n) { return image.broker(n) != nullptr; };
    decided = cluster::reassign(*current, target, allow_rf_change, registered, live);
  }
  if (auto* e = std::get_if<cluster::ReassignmentError>(&decided)) return Outcome{e->error, e->message};
  return std::get<cluster::PartitionRegistration>(decided);
}

}  // namespace

template <>
awaitable<Response_> handle<p::AlterPartitionReassignmentsApi>(RequestContext& ctx, Request_& req) {
  Broker& b = ctx.broker;
  Response_ resp;
  // v0 has no such field: Kafka reads it as true there.
  const bool allow_rf_change = ctx.api_version() < 1 || req.allow_replication_factor_change;
  resp.allow_replication_factor_change = allow_rf_change;
  if (!authorized_on_cluster(ctx, AclOperation::alter)) {
    resp.error_code = p::code(p::ErrorCode::cluster_authorization_failed);
    resp.error_message = "Cluster authorization failed.";
    co_return resp;
  }
  const auto limit = std::chrono::milliseconds(std::max(0, req.timeout_ms));
  for (const auto& t : req.topics) {
    TopicResult_ tr;
    tr.name = t.name;
    for (const auto& part : t.partitions) {
      DecidePartitionChange decided = [&](const cluster::MetadataImage& image) {
        return decide(image, t.name, part.partition_index, part.replicas, allow_rf_change);
      };
      Outcome o = co_await write_partition_change(b, t.name, part.partition_index, std::move(decided), limit);
      PartitionResult_ pr;
      pr.partition_index = part.partition_index;
      pr.error_code = p::code(o.error);
      pr.error_message = std::move(o.message);
      tr.partitions.push_back(std::move(pr));
    }
    resp.responses.push_back(std::move(tr));
  }
  co_return resp;
}

}  // namespace runnel::broker
