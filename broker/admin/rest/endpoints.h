// The REST endpoint families, one file each; rest_server.cc routes to them.
// Each serves one request and says whether the connection stays open.
#pragma once

#include <string>

#include "broker/admin/rest/exchange.h"

namespace runnel::broker::admin::rest {

awaitable<bool> list_clusters(Exchange& ex);                            // v3_clusters.cc
awaitable<bool> get_cluster(Exchange& ex, const std::string& cluster);  // v3_clusters.cc
// The cluster id REST Proxy names in paths: the broker's metadata's.
std::string cluster_id_of(Broker& broker);

awaitable<bool> v3_produce(Exchange& ex, const std::string& cluster, const std::string& topic);  // v3_produce.cc
awaitable<bool> v2_produce(Exchange& ex, const std::string& topic, std::optional<int32_t> partition);  // v2_produce.cc
awaitable<bool> raw_produce(Exchange& ex, const std::string& topic);  // raw_produce.cc
// Every path under /consumers (ex.path[0] == "consumers").
awaitable<bool> v2_consumers(Exchange& ex);  // v2_consumers.cc

}  // namespace runnel::broker::admin::rest
