// produce_bench: librdkafka producer throughput and latency against a broker
// (Runnel, Apache Kafka) or against librdkafka's in-memory mock cluster.
//
//   produce_bench --bootstrap HOST:PORT [options]   a real broker
//   produce_bench --mock [options]                   rd_kafka_mock_cluster_new, in process
//
// Options: --topic T (default bench), --partitions P (6; created on the mock,
// expected to exist or be auto-created on a broker), --records N (2000000),
// --size BYTES (100), --acks 0|1|all (1), --linger-ms (5), --batch-size
// (librdkafka's default), --compression none|gzip|snappy|lz4|zstd (none),
// --idempotence (off). Prints one JSON line: records/s, MB/s, and the
// send-to-delivery-report latency percentiles in milliseconds.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::string bootstrap;
  bool mock = false;
  std::string topic = "bench";
  int partitions = 6;
  long records = 2'000'000;
  int size = 100;
  std::string acks = "1";
  std::string linger_ms = "5";
  std::string batch_size;
  std::string compression = "none";
  bool idempotence = false;
};

struct Stats {
  std::vector<int64_t> latency_us;  // indexed by record number
  long delivered = 0;
  long failed = 0;
  std::string first_error;
};

Clock::time_point g_start;

int64_t now_us() { return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - g_start).count(); }

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* stats = static_cast<Stats*>(opaque);
  if (m->err) {
    if (stats->failed++ == 0) stats->first_error = rd_kafka_err2str(m->err);
    return;
  }
  long index = reinterpret_cast<long>(m->_private);
  stats->latency_us[static_cast<size_t>(index)] = now_us() - stats->latency_us[static_cast<size_t>(index)];
  ++stats->delivered;
}

void set(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "produce_bench: %s=%s: %s\n", key, value.c_str(), err);
    std::exit(2);
  }
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "produce_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--bootstrap") o.bootstrap = value();
    else if (a == "--mock") o.mock = true;
    else if (a == "--topic") o.topic = value();
    else if (a == "--partitions") o.partitions = std::stoi(value());
    else if (a == "--records") o.records = std::stol(value());
    else if (a == "--size") o.size = std::stoi(value());
    else if (a == "--acks") o.acks = value();
    else if (a == "--linger-ms") o.linger_ms = value();
    else if (a == "--batch-size") o.batch_size = value();
    else if (a == "--compression") o.compression = value();
    else if (a == "--idempotence") o.idempotence = true;
    else {
      std::fprintf(stderr, "produce_bench: unknown option %s\n", a.c_str());
      std::exit(2);
    }
  }
  if (o.mock == !o.bootstrap.empty()) {
    std::fprintf(stderr, "produce_bench: give exactly one of --bootstrap HOST:PORT or --mock\n");
    std::exit(2);
  }
  return o;
}

double percentile(std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return static_cast<double>(v[k]) / 1000.0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  char err[512];

  // The mock cluster needs an rd_kafka_t of its own to live in.
  rd_kafka_t* mock_owner = nullptr;
  rd_kafka_mock_cluster_t* mock = nullptr;
  std::string bootstrap = o.bootstrap;
  if (o.mock) {
    rd_kafka_conf_t* mc = rd_kafka_conf_new();
    mock_owner = rd_kafka_new(RD_KAFKA_PRODUCER, mc, err, sizeof err);
    mock = rd_kafka_mock_cluster_new(mock_owner, 1);
    if (!mock || rd_kafka_mock_topic_create(mock, o.topic.c_str(), o.partitions, 1)) {
      std::fprintf(stderr, "produce_bench: cannot start the mock cluster\n");
      return 1;
    }
    bootstrap = rd_kafka_mock_cluster_bootstraps(mock);
  }

  Stats stats;
  stats.latency_us.assign(static_cast<size_t>(o.records), 0);
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "acks", o.acks);
  set(conf, "linger.ms", o.linger_ms);
  set(conf, "compression.codec", o.compression);
  set(conf, "enable.idempotence", o.idempotence ? "true" : "false");
  set(conf, "queue.buffering.max.messages", "1000000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  if (!o.batch_size.empty()) set(conf, "batch.size", o.batch_size);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_opaque(conf, &stats);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) {
    std::fprintf(stderr, "produce_bench: %s\n", err);
    return 1;
  }
  rd_kafka_topic_t* topic = rd_kafka_topic_new(rk, o.topic.c_str(), nullptr);

  // Warm up: metadata and connections, outside the measurement.
  const struct rd_kafka_metadata* md = nullptr;
  if (rd_kafka_metadata(rk, 0, topic, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    std::fprintf(stderr, "produce_bench: no metadata for %s\n", o.topic.c_str());
    return 1;
  }
  rd_kafka_metadata_destroy(md);

  std::vector<char> payload(static_cast<size_t>(o.size));
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
  char key[32];

  g_start = Clock::now();
  for (long i = 0; i < o.records; ++i) {
    int klen = std::snprintf(key, sizeof key, "%ld", i);
    stats.latency_us[static_cast<size_t>(i)] = now_us();
    while (rd_kafka_produce(topic, static_cast<int32_t>(i % o.partitions), RD_KAFKA_MSG_F_COPY, payload.data(),
                            payload.size(), key, static_cast<size_t>(klen), reinterpret_cast<void*>(i)) == -1) {
      if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        std::fprintf(stderr, "produce_bench: produce: %s\n", rd_kafka_err2str(rd_kafka_last_error()));
        return 1;
      }
      rd_kafka_poll(rk, 1);
      stats.latency_us[static_cast<size_t>(i)] = now_us();
    }
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  while (rd_kafka_outq_len(rk) > 0) rd_kafka_poll(rk, 10);
  double seconds = std::chrono::duration<double>(Clock::now() - g_start).count();

  std::vector<int64_t> lat;
  lat.reserve(static_cast<size_t>(stats.delivered));
  for (auto v : stats.latency_us)
    if (v >= 0) lat.push_back(v);
  double rps = static_cast<double>(stats.delivered) / seconds;
  std::printf(
      "{\"target\":\"%s\",\"records\":%ld,\"size\":%d,\"partitions\":%d,\"acks\":\"%s\",\"compression\":\"%s\","
      "\"idempotence\":%s,\"delivered\":%ld,\"failed\":%ld,\"seconds\":%.3f,\"records_per_s\":%.0f,"
      "\"mb_per_s\":%.2f,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"p999_ms\":%.2f}\n",
      o.mock ? "mock" : "broker", o.records, o.size, o.partitions, o.acks.c_str(), o.compression.c_str(),
      o.idempotence ? "true" : "false", stats.delivered, stats.failed, seconds, rps,
      rps * o.size / 1e6, percentile(lat, 0.5), percentile(lat, 0.99), percentile(lat, 0.999));
  if (stats.failed) std::fprintf(stderr, "produce_bench: %ld failed, first: %s\n", stats.failed, stats.first_error.c_str());

  rd_kafka_topic_destroy(topic);
  rd_kafka_destroy(rk);
  if (mock) rd_kafka_mock_cluster_destroy(mock);
  if (mock_owner) rd_kafka_destroy(mock_owner);
  return stats.failed ? 1 : 0;
}
