#include "broker/admin/metrics.h"

#include <algorithm>
#include <map>
#include <memory>
#include <vector>

#include "broker/admin/prometheus_text.h"
#include "broker/api_registry.h"
#include "broker/broker.h"

namespace runnel::broker::admin {

namespace {

using replication::Partition;
using TopicPartitions = std::map<std::string, std::vector<std::shared_ptr<Partition>>>;

// Sorted by topic, then partition: a scrape reads the same order each time.
TopicPartitions hosted_partitions(Broker& broker) {
  TopicPartitions out;
  broker.replica_manager().for_each_partition([&](const std::shared_ptr<Partition>& p) { out[p->topic()].push_back(p); });
  for (auto& [_, parts] : out)
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a->index() < b->index(); });
  return out;
}

void topic_family(PrometheusText& out, const TopicPartitions& topics, const TopicCounters& all, const char* name,
                  const char* help, const std::atomic<uint64_t> TopicCounters::*counter) {
  out.family(name, "counter", help);
  out.sample(name, {}, (all.*counter).load(std::memory_order_relaxed));
  for (const auto& [topic, parts] : topics) {
    uint64_t sum = 0;
    for (const auto& p : parts) sum += (p->counters().*counter).load(std::memory_order_relaxed);
    out.sample(name, {{"topic", topic}}, sum);
  }
}

void request_family(PrometheusText& out, Broker& broker) {
  const char* name = "kafka_network_requestmetrics_requests_total";
  out.family(name, "counter", "Requests read, by API and version (Kafka's RequestsPerSec)");
  const RequestCounters& counters = broker.request_counters();
  for (int16_t key = 0; key < RequestCounters::kApiKeys; ++key) {
    const ApiRoute* route = find_route(key);
    if (!route) continue;
    for (int16_t v = 0; v < RequestCounters::kVersions; ++v)
      if (uint64_t n = counters.get(key, v)) {
        const std::string version = std::to_string(v);
        out.sample(name, {{"request", route->name}, {"version", version}}, n);
      }
  }
}

void connection_family(PrometheusText& out, Broker& broker) {
  const char* name = "kafka_server_socket_server_metrics_connection_count";
  out.family(name, "gauge", "Open connections, by listener");
  for (const auto& l : broker.config().listeners()) {
    if (l.name == "CONTROLLER") continue;  // not served by a Runnel node
    out.sample(name, {{"listener", l.name}}, static_cast<uint64_t>(broker.connections(l.name)));
  }
}

void log_families(PrometheusText& out, const TopicPartitions& topics) {
  struct Gauge {
    const char* name;
    const char* help;
    int64_t (*value)(storage::Log&);
  };
  static const Gauge gauges[] = {
      {"kafka_log_log_size", "Bytes of the partition's segments",
       [](storage::Log& l) { return l.size_bytes(); }},
      {"kafka_log_log_numlogsegments", "Segments of the partition's log",
       [](storage::Log& l) { return static_cast<int64_t>(l.segment_count()); }},
      {"kafka_log_log_logendoffset", "The partition's log end offset",
       [](storage::Log& l) { return l.log_end_offset(); }},
      {"kafka_log_log_logstartoffset", "The partition's log start offset",
       [](storage::Log& l) { return l.log_start_offset(); }},
  };
  for (const auto& g : gauges) {
    out.family(g.name, "gauge", g.help);
    for (const auto& [topic, parts] : topics)
      for (const auto& p : parts) {
        const std::string partition = std::to_string(p->index());
        out.sample(g.name, {{"topic", topic}, {"partition", partition}}, g.value(p->log()));
      }
  }
}

}  // namespace

std::string render_metrics(Broker& broker) {
  PrometheusText out;
  const TopicPartitions topics = hosted_partitions(broker);
  const TopicCounters& all = broker.replica_manager().all_topics_counters();
  topic_family(out, topics, all, "kafka_server_brokertopicmetrics_messagesin_total",
               "Records appended as leader (Kafka's MessagesInPerSec)", &TopicCounters::messages_in);
  topic_family(out, topics, all, "kafka_server_brokertopicmetrics_bytesin_total",
               "Record batch bytes appended as leader (Kafka's BytesInPerSec)", &TopicCounters::bytes_in);
  topic_family(out, topics, all, "kafka_server_brokertopicmetrics_bytesout_total",
               "Record bytes sent to consumers (Kafka's BytesOutPerSec)", &TopicCounters::bytes_out);
  request_family(out, broker);
  connection_family(out, broker);
  log_families(out, topics);
  return out.take();
}

}  // namespace runnel::broker::admin
