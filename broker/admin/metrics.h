// What GET /metrics answers: the broker's state and counters (counters.h,
// request_metrics.h, storage/flush_stats.h) in Prometheus's text format,
// named as Prometheus's JMX exporter renders Kafka's JMX beans, so
// dashboards and alerts written for Kafka read them:
//
//   kafka_server_brokertopicmetrics_{messagesin,bytesin,bytesout}_total
//       {topic} per topic hosted here, and without a label for all topics;
//   kafka_network_requestmetrics_{requests,errors}_total and the
//       totaltimems histogram, by API (request_families.cc);
//   kafka_server_socket_server_metrics_connection_count{listener};
//   kafka_log_log_* per hosted partition and the flush histograms
//       (log_families.cc); ReplicaManager and controller gauges
//       (replica_families.cc); groups and their lag (group_families.cc).
//
// Runs on the broker's event loop, as everything that reads the partitions.
#pragma once

#include <string>

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::admin {

std::string render_metrics(Broker& broker);

}  // namespace runnel::broker::admin
