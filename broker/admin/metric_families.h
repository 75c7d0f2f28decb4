// The families of GET /metrics, one function a concern, each on the
// broker's event loop (metrics.cc calls them in turn).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "broker/admin/prometheus_text.h"
#include "replication/partition.h"

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::admin {

// The hosted partitions by topic, each topic's in partition order, so a
// scrape reads the same order each time.
using TopicPartitions = std::map<std::string, std::vector<std::shared_ptr<replication::Partition>>>;

// RequestMetrics: requests, errors and times by API; requests in flight
// and the request memory pool (request_families.cc).
void request_families(PrometheusText& out, Broker& broker);
// Log: size, segments and offsets per partition; fsyncs and group-commit
// rounds (log_families.cc).
void log_families(PrometheusText& out, const TopicPartitions& topics);
// ReplicaManager and the controller: partition and leader counts,
// under-replicated, under-min-ISR and offline partitions, ISR changes,
// producer ids, the fetch session cache (replica_families.cc).
void replica_families(PrometheusText& out, Broker& broker, const TopicPartitions& topics);
// Groups by state, and each group's committed offsets and lag
// (group_families.cc).
void group_families(PrometheusText& out, Broker& broker, const TopicPartitions& topics);
// Client quotas: the rate and average throttle time of each sensor
// (quota_families.cc).
void quota_families(PrometheusText& out, Broker& broker);

}  // namespace runnel::broker::admin
