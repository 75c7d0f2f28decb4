#include "broker/admin/metric_families.h"
#include "broker/alter_partition_manager.h"
#include "broker/broker.h"
#include "broker/cluster_member.h"

namespace runnel::broker::admin {

namespace {

struct ReplicaCounts {
  uint64_t partitions = 0;
  uint64_t leaders = 0;
  uint64_t under_replicated = 0;
  uint64_t under_min_isr = 0;
  uint64_t at_min_isr = 0;
  uint64_t producer_ids = 0;
};

// Kafka's ReplicaManager gauges: each is about partitions this broker
// leads, as Kafka's are (a follower does not know the ISR is short).
ReplicaCounts count_replicas(Broker& broker, const TopicPartitions& topics) {
  ReplicaCounts c;
  for (const auto& [topic, parts] : topics) {
    const auto t = broker.topics().find(topic);
    const size_t min_isr = t ? static_cast<size_t>(std::max(1, t->config.min_insync_replicas)) : 1;
    for (const auto& p : parts) {
      ++c.partitions;
      c.producer_ids += p->producers().size();
      if (!p->is_leader()) continue;
      ++c.leaders;
      const size_t isr = p->isr().size();
      if (isr < p->replicas().size()) ++c.under_replicated;
      if (isr < min_isr) ++c.under_min_isr;
      if (isr == min_isr) ++c.at_min_isr;
    }
  }
  return c;
}

void gauge(PrometheusText& out, const char* name, const char* help, uint64_t value) {
  out.family(name, "gauge", help);
  out.sample(name, {}, value);
}

void counter(PrometheusText& out, const char* name, const char* help, uint64_t value) {
  out.family(name, "counter", help);
  out.sample(name, {}, value);
}

// The active controller's view of the whole cluster, as Kafka's
// KafkaController gauges (0 on the other brokers). A single node is its
// own controller.
void controller(PrometheusText& out, Broker& broker) {
  const ClusterMember* member = broker.cluster_member();
  const bool active = !member || member->is_controller();
  uint64_t topics = 0, partitions = 0, offline = 0;
  if (active) {
    const cluster::ImagePtr image = broker.metadata_cache().image();
    for (const auto& [_, topic] : image->topics()) {
      ++topics;
      for (const auto& p : topic->partitions) {
        ++partitions;
        if (!p.has_leader()) ++offline;
      }
    }
  }
  gauge(out, "kafka_controller_kafkacontroller_activecontrollercount",
        "1 on the broker that is the active controller", active ? 1 : 0);
  gauge(out, "kafka_controller_kafkacontroller_globaltopiccount", "Topics in the cluster (active controller)",
        topics);
  gauge(out, "kafka_controller_kafkacontroller_globalpartitioncount",
        "Partitions in the cluster (active controller)", partitions);
  gauge(out, "kafka_controller_kafkacontroller_offlinepartitionscount",
        "Partitions without a leader (active controller)", offline);
}

}  // namespace

void replica_families(PrometheusText& out, Broker& broker, const TopicPartitions& topics) {
  const ReplicaCounts c = count_replicas(broker, topics);
  gauge(out, "kafka_server_replicamanager_partitioncount", "Partitions with a replica on this broker", c.partitions);
  gauge(out, "kafka_server_replicamanager_leadercount", "Partitions this broker leads", c.leaders);
  gauge(out, "kafka_server_replicamanager_underreplicatedpartitions",
        "Partitions led here whose ISR is smaller than their replica set", c.under_replicated);
  gauge(out, "kafka_server_replicamanager_underminisrpartitioncount",
        "Partitions led here whose ISR is below min.insync.replicas (acks=all produce fails)", c.under_min_isr);
  gauge(out, "kafka_server_replicamanager_atminisrpartitioncount",
        "Partitions led here whose ISR is exactly min.insync.replicas", c.at_min_isr);
  gauge(out, "kafka_server_replicamanager_produceridcount",
        "Producer ids with state in the partitions hosted here", c.producer_ids);
  const AlterPartitionManager* isr = broker.alter_partitions();
  counter(out, "kafka_server_replicamanager_isrshrinks_total", "ISR shrinks this broker wrote as leader",
          isr ? isr->isr_shrinks() : 0);
  counter(out, "kafka_server_replicamanager_isrexpands_total", "ISR expansions this broker wrote as leader",
          isr ? isr->isr_expands() : 0);
  // Kafka's FetchSessionCache beans (KIP-227).
  const FetchSessionCache& sessions = broker.fetch_sessions();
  gauge(out, "kafka_server_fetchsessioncache_numincrementalfetchsessions", "Incremental fetch sessions in the cache",
        sessions.size());
  gauge(out, "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached",
        "Partitions kept by the incremental fetch sessions", static_cast<uint64_t>(sessions.partitions_cached()));
  counter(out, "kafka_server_fetchsessioncache_incrementalfetchsessionevictions_total",
          "Fetch sessions evicted to make room for new ones", sessions.evictions());
  controller(out, broker);
}

}  // namespace runnel::broker::admin
