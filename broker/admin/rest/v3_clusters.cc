// GET /v3/clusters and /v3/clusters/{cluster_id}: REST Proxy v3's cluster
// resources, so that a client finds the cluster id its produce paths name.
// A cluster lists the related collections REST Proxy links; Runnel serves
// only the records one of them (README.md says which).
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "broker/admin/rest/endpoints.h"
#include "broker/advertised_controller.h"
#include "broker/broker.h"

namespace runnel::broker::admin::rest {

namespace json = boost::json;

namespace {

std::string base_url(const Exchange& ex) {
  const auto host = ex.request()[http::field::host];
  return "http://" + std::string(host.empty() ? std::string_view("localhost") : std::string_view(host.data(), host.size())) + "/v3";
}

json::object related(const std::string& url) {
  json::object o;
  o["related"] = url;
  return o;
}

json::object cluster_resource(const Exchange& ex, Broker& broker) {
  const std::string id = cluster_id_of(broker);
  const std::string self = base_url(ex) + "/clusters/" + id;
  json::object metadata;
  metadata["self"] = self;
  metadata["resource_name"] = "crn:///kafka=" + id;
  json::object c;
  c["kind"] = "KafkaCluster";
  c["metadata"] = std::move(metadata);
  c["cluster_id"] = id;
  const cluster::ImagePtr image = broker.metadata_cache().image();
  const NodeId controller = advertised_controller(*image, NodeId(broker.node_id()));
  if (controller.value() >= 0)
    c["controller"] = related(self + "/brokers/" + std::to_string(controller.value()));
  else
    c["controller"] = nullptr;
  c["acls"] = related(self + "/acls");
  c["brokers"] = related(self + "/brokers");
  c["broker_configs"] = related(self + "/broker-configs");
  c["consumer_groups"] = related(self + "/consumer-groups");
  c["topics"] = related(self + "/topics");
  c["partition_reassignments"] = related(self + "/topics/-/partitions/-/reassignment");
  return c;
}

}  // namespace

std::string cluster_id_of(Broker& broker) { return broker.metadata_cache().image()->cluster_id(); }

awaitable<bool> list_clusters(Exchange& ex) {
  if (auto e = co_await read_body(ex, kMaxBody)) co_return co_await send_error(ex, *e);
  json::object metadata;
  metadata["self"] = base_url(ex) + "/clusters";
  metadata["next"] = nullptr;
  json::array data;
  data.push_back(cluster_resource(ex, ex.service.broker()));
  json::object list;
  list["kind"] = "KafkaClusterList";
  list["metadata"] = std::move(metadata);
  list["data"] = std::move(data);
  co_return co_await send(ex, http::status::ok, "application/json", json::serialize(list));
}

awaitable<bool> get_cluster(Exchange& ex, const std::string& cluster) {
  if (auto e = co_await read_body(ex, kMaxBody)) co_return co_await send_error(ex, *e);
  if (cluster != cluster_id_of(ex.service.broker())) co_return co_await send_error(ex, errors::cluster_not_found(cluster));
  co_return co_await send(ex, http::status::ok, "application/json",
                          json::serialize(cluster_resource(ex, ex.service.broker())));
}

}  // namespace runnel::broker::admin::rest
