#include <string>

#include "broker/admin/metric_families.h"
#include "storage/flush_stats.h"
#include "storage/log.h"

namespace runnel::broker::admin {

namespace {

void partition_gauges(PrometheusText& out, const TopicPartitions& topics) {
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

void flushes(PrometheusText& out) {
  const storage::FlushStats& stats = storage::flush_stats();
  const char* flush = "kafka_log_logflushstats_logflushrateandtimems";
  out.family(flush, "histogram",
             "Milliseconds each fdatasync of a log's files took (Kafka's LogFlushRateAndTimeMs; with "
             "runnel.acks.all.fsync, acks=all appends are flushed before they are acknowledged)");
  out.histogram(flush, {}, stats.flush_ms, storage::FlushStats::kFlushBucketsMs);
  const char* batch = "runnel_log_group_commit_size";
  out.family(batch, "histogram",
             "acks=all appends made durable by one group-commit round (one fdatasync of the partition's files)");
  out.histogram(batch, {}, stats.group_commit_size, storage::FlushStats::kBatchBuckets);
}

}  // namespace

void log_families(PrometheusText& out, const TopicPartitions& topics) {
  partition_gauges(out, topics);
  flushes(out);
}

}  // namespace runnel::broker::admin
