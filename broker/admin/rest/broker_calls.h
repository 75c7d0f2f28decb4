// How REST's consumer instances reach the Kafka handlers: as one more
// Kafka client. A request this broker answers runs its handler in-process
// under the REST client's principal (ACLs, quotas and validation as for a
// Kafka client); one another broker must answer (in a cluster: the group's
// coordinator, a partition's leader) goes to that broker over the
// inter-broker channel, where REST Proxy's consumer would have sent it.
// The local handler runs first even then, so the REST client's own
// authorization is checked here before anything is forwarded.
#pragma once

#include <optional>
#include <string>

#include "broker/admin/rest/record_producer.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/inter_broker_channel.h"

namespace runnel::broker::admin::rest {

// In a cluster, the broker that leads topic-partition when it is another
// one, as this broker's metadata says: where a request this broker's
// handler answered NOT_LEADER_OR_FOLLOWER goes instead.
inline std::optional<int32_t> leader_elsewhere(Broker& broker, const std::string& topic, int32_t partition) {
  if (!broker.in_cluster()) return std::nullopt;
  const cluster::PartitionRegistration* reg = broker.metadata_cache()->partition(topic, PartitionId(partition));
  if (!reg || !reg->has_leader() || reg->leader == NodeId(broker.node_id())) return std::nullopt;
  return reg->leader.value();
}

// The answer of `node` (this broker or another) to `req` at `version`;
// nullopt when another broker could not be reached.
template <typename Api>
awaitable<std::optional<typename Api::Response>> call_broker(Broker& broker, const RestClient& client, int32_t node,
                                                             typename Api::Request req, int16_t version) {
  if (node == broker.node_id() || !broker.in_cluster() || !broker.inter_broker()) {
    protocol::RequestHeader h;
    h.api_key = Api::key;
    h.api_version = version;
    h.client_id = "runnel-rest";
    RequestContext ctx{broker, h, client.host, "REST", client.principal};
    co_return co_await handle<Api>(ctx, req);
  }
  auto answer = co_await broker.inter_broker()->send<Api>(NodeId(node), req, version);
  if (!answer) co_return std::nullopt;
  co_return std::move(*answer);
}

}  // namespace runnel::broker::admin::rest
