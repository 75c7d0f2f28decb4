// DescribeCluster (key 60, KIP-700): the cluster id, the controller and the
// brokers, as the admin client's describeCluster sees them. Flexible from
// v0; v1 adds the endpoint type (KIP-919: brokers answer for BROKER only),
// v2 the fenced flag and the request to include fenced brokers.
//
// The brokers come from the metadata cache's image: on one node this node
// alone, never fenced. The controller id is a live broker, as Kafka's
// brokers answer, not etcd's elected controller (advertised_controller.h
// says why); on one node, itself. The cluster's authorized operations are
// filled in only when asked for: Runnel has no authorizer, so every
// cluster operation is allowed.
#include "broker/advertised_controller.h"
#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;

constexpr int8_t kBrokerEndpoint = 1;
constexpr int8_t kControllerEndpoint = 2;

const char* endpoint_name(int8_t t) { return t == kBrokerEndpoint ? "BROKER" : "CONTROLLER"; }

}  // namespace

template <>
awaitable<p::DescribeClusterResponse> handle<p::DescribeClusterApi>(RequestContext& ctx, p::DescribeClusterRequest& req) {
  Broker& b = ctx.broker;
  const int16_t v = ctx.api_version();
  p::DescribeClusterResponse resp;
  if (req.endpoint_type != kBrokerEndpoint && req.endpoint_type != kControllerEndpoint) {
    resp.error_code = p::code(v == 0 ? ErrorCode::invalid_request : ErrorCode::unsupported_endpoint_type);
    resp.error_message = "Unsupported endpoint type " + std::to_string(req.endpoint_type);
    co_return resp;
  }
  if (req.endpoint_type != kBrokerEndpoint) {
    resp.error_code = p::code(v == 0 ? ErrorCode::invalid_request : ErrorCode::mismatched_endpoint_type);
    resp.error_message = std::string("The request was sent to an endpoint of type ") + endpoint_name(kBrokerEndpoint) +
                         ", but we wanted an endpoint of type " + endpoint_name(req.endpoint_type);
    co_return resp;
  }
  resp.endpoint_type = kBrokerEndpoint;
  const cluster::MetadataImage& image = *b.metadata_cache();
  resp.cluster_id = image.cluster_id();
  resp.controller_id = advertised_controller(image, NodeId(b.node_id())).value();
  for (const auto& [id, broker] : image.brokers()) {
    // Fenced brokers only when asked for (v2+), as Kafka's brokers answer.
    if (broker.fenced && !req.include_fenced_brokers) continue;
    const cluster::BrokerEndpoint* e = endpoint_for(broker, ctx.listener_name);
    if (!e) continue;
    p::DescribeClusterResponse::DescribeClusterBroker out;
    out.broker_id = id.value();
    out.host = e->host;
    out.port = e->port;
    out.rack = broker.rack;
    out.is_fenced = broker.fenced;
    resp.brokers.push_back(std::move(out));
  }
  // Kafka refuses no one DescribeCluster; the operations are reported only
  // to a principal that may DESCRIBE the cluster (0 otherwise).
  if (req.include_cluster_authorized_operations)
    resp.cluster_authorized_operations = authorized_on_cluster(ctx, AclOperation::describe)
                                             ? authorized_operations(ctx, ResourceType::cluster, security::kClusterName)
                                             : 0;
  co_return resp;
}

}  // namespace runnel::broker
