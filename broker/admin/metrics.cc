#include "broker/admin/metrics.h"

#include <algorithm>

#include "broker/admin/metric_families.h"
#include "broker/broker.h"

namespace runnel::broker::admin {

namespace {

using replication::Partition;

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

void connection_family(PrometheusText& out, Broker& broker) {
  const char* name = "kafka_server_socket_server_metrics_connection_count";
  out.family(name, "gauge", "Open connections, by listener");
  for (const auto& l : broker.config().listeners()) {
    if (l.name == "CONTROLLER") continue;  // not served by a Runnel node
    out.sample(name, {{"listener", l.name}}, static_cast<uint64_t>(broker.connections(l.name)));
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
  request_families(out, broker);
  connection_family(out, broker);
  log_families(out, topics);
  replica_families(out, broker, topics);
  group_families(out, broker, topics);
  quota_families(out, broker);
  return out.take();
}

}  // namespace runnel::broker::admin
