// ElectLeaders (key 43, KIP-183 / KIP-460): `kafka-leader-election` and
// the admin clients' electLeaders. PREFERRED (0) makes each partition's
// first replica its leader again when it is live and in the ISR; UNCLEAN
// (1) gives a leaderless partition a live replica even out of the ISR
// (records it lacked are lost, as the operator asked). A null partition
// list means every partition, and then those needing no election are left
// out of the response, as Kafka's controller leaves them.
//
// Kafka's controller makes the election; here the broker that is asked
// writes it, by compare-and-swap on the partition's key (a concurrent
// change of the partition wins, and this one is decided again over it),
// then answers once its image has the new leaders. On a single node every
// partition is led by its only replica: nothing is ever needed.
#include <map>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/partition_change_writer.h"
#include "cluster/partition_change.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;
using Request_ = p::ElectLeadersRequest;
using Result_ = p::ElectLeadersResponse::ReplicaElectionResult;

constexpr int8_t kPreferred = 0;
constexpr int8_t kUnclean = 1;

using Wanted = std::map<std::string, std::vector<int32_t>>;

Wanted wanted_partitions(const Request_& req, const cluster::MetadataImage& image) {
  Wanted out;
  if (req.topic_partitions) {
    for (const auto& t : *req.topic_partitions)
      for (int32_t p : t.partition_id) out[t.topic].push_back(p);
    return out;
  }
  for (const auto& [name, t] : image.topics())
    for (size_t i = 0; i < t->partitions.size(); ++i) out[name].push_back(static_cast<int32_t>(i));
  return out;
}

// The election for one partition over `image`, or why there is none.
std::variant<cluster::PartitionRegistration, ErrorCode> decide(const cluster::MetadataImage& image,
                                                               const std::string& topic, int32_t partition,
                                                               int8_t type) {
  const cluster::PartitionRegistration* current = image.partition(topic, PartitionId(partition));
  if (!current) return ErrorCode::unknown_topic_or_partition;
  auto live = [&image](NodeId n) { return image.is_live(n); };
  if (type == kPreferred) {
    if (!current->replicas.empty() && current->leader == current->replicas.front()) return ErrorCode::election_not_needed;
    auto next = cluster::elect_preferred(*current, live);
    if (!next) return ErrorCode::preferred_leader_not_available;
    return *next;
  }
  if (current->has_leader()) return ErrorCode::election_not_needed;
  auto next = cluster::reelect(*current, live, /*unclean=*/true);
  if (!next || !next->has_leader()) return ErrorCode::eligible_leaders_not_available;
  return *next;
}

}  // namespace

template <>
awaitable<p::ElectLeadersResponse> handle<p::ElectLeadersApi>(RequestContext& ctx, p::ElectLeadersRequest& req) {
  Broker& b = ctx.broker;
  p::ElectLeadersResponse resp;
  const int8_t type = ctx.api_version() >= 1 ? req.election_type : kPreferred;
  if (type != kPreferred && type != kUnclean) {
    resp.error_code = p::code(ErrorCode::invalid_request);
    co_return resp;
  }
  if (!authorized_on_cluster(ctx, AclOperation::alter)) {
    // Kafka: ALTER on the cluster, else the request's error and every
    // partition it names carry CLUSTER_AUTHORIZATION_FAILED.
    resp.error_code = p::code(ErrorCode::cluster_authorization_failed);
    if (req.topic_partitions)
      for (const auto& t : *req.topic_partitions) {
        Result_ tr;
        tr.topic = t.topic;
        for (int32_t partition : t.partition_id)
          tr.partition_result.push_back({partition, p::code(ErrorCode::cluster_authorization_failed), std::nullopt, {}});
        resp.replica_election_results.push_back(std::move(tr));
      }
    co_return resp;
  }
  const bool all = !req.topic_partitions;
  const auto limit = std::chrono::milliseconds(std::max(0, req.timeout_ms));
  const Wanted wanted = wanted_partitions(req, *b.metadata_cache());
  for (const auto& entry : wanted) {
    // Not a structured binding: a lambda below captures the name (clang 14,
    // the fuzz-broker preset, cannot capture a binding).
    const auto& topic = entry.first;
    const auto& partitions = entry.second;
    Result_ tr;
    tr.topic = topic;
    for (int32_t partition : partitions) {
      DecidePartitionChange decided =
          [&](const cluster::MetadataImage& image) -> std::variant<cluster::PartitionRegistration, PartitionChangeOutcome> {
        auto next = decide(image, topic, partition, type);
        if (auto* e = std::get_if<ErrorCode>(&next)) return PartitionChangeOutcome{*e, std::nullopt};
        return std::get<cluster::PartitionRegistration>(std::move(next));
      };
      const ErrorCode error = (co_await write_partition_change(b, topic, partition, std::move(decided), limit)).error;
      if (all && error == ErrorCode::election_not_needed) continue;
      tr.partition_result.push_back({partition, p::code(error), std::nullopt, {}});
    }
    if (!tr.partition_result.empty()) resp.replica_election_results.push_back(std::move(tr));
  }
  co_return resp;
}

}  // namespace runnel::broker
