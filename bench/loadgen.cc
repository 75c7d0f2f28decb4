// loadgen: a librdkafka load generator for a broker (Runnel, Apache Kafka) or
// for librdkafka's in-memory mock cluster. bench/run_suite.py drives it; it
// prints one JSON object on stdout.
//
//   loadgen --bootstrap HOST:PORT [options]   a real broker
//   loadgen --mock [options]                  rd_kafka_mock_cluster_new, in this process
//
// Modes (--mode):
//   produce  send --records N (or for --duration S), optionally at --rate R
//            records/s; records/s, MB/s and send-to-delivery-report latency.
//   consume  first fill the topic with --records N (acks=1, same size and
//            codec; reported as "fill"; --skip-fill when the topic already
//            holds them), then read them back from the start
//            with a fresh consumer and time that. The mock keeps only 5 MiB
//            per partition (librdkafka's rd_kafka_mock_partition_init), so
//            against it the consumer re-reads what is kept until it has read
//            N records: the same volume, from memory.
//   e2e      a consumer thread reads while the producer sends at --rate R for
//            --duration S; each value starts with its send time
//            (CLOCK_MONOTONIC ns), so produce-to-consume latency is exact.
//   probe    wait until the broker accepts TCP connections, then produce one
//            record (auto-creating the topic) until one is acknowledged;
//            prints the CLOCK_MONOTONIC time of that acknowledgement, for a
//            broker's start-to-first-produce (the runner starts the probe
//            first and the broker after it).
//
// Options: --topic T (bench), --partitions P (6), --create-topic (CreateTopics
// with P partitions and wait for leaders; the mock always creates it),
// --records N (1000000), --duration S (instead of a count), --size BYTES
// (100), --keys unique|none|K (a decimal key per record, none, or i % K),
// --acks 0|1|all (1), --compression none|gzip|snappy|lz4|zstd, --idempotence,
// --linger-ms (5), --batch-size, --rate R (0: as fast as possible),
// --timeout S (600: give up and report failure), --transaction-records N (a
// transactional producer, transactional.id loadgen-<topic>-<pid>: a
// transaction of N records committed after every N; each
// rd_kafka_commit_transaction, which first flushes the transaction's last
// records, is timed as commit_p50/p99; a consume fill is transactional too,
// with acks=all), --isolation read_uncommitted|read_committed (the
// consumer's isolation.level).
//
// Values are slices of pseudo-random text from a fixed seed (words of a small
// vocabulary), so codecs see data that compresses like text rather than one
// repeated buffer.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string mode = "produce";
  std::string bootstrap;
  bool mock = false;
  std::string topic = "bench";
  int partitions = 6;
  bool create_topic = false;
  bool skip_fill = false;
  long records = 1'000'000;
  double duration_s = 0;
  int size = 100;
  std::string keys = "unique";
  std::string acks = "1";
  std::string compression = "none";
  bool idempotence = false;
  long txn_records = 0;
  std::string isolation = "read_uncommitted";
  std::string linger_ms = "5";
  std::string batch_size;
  double rate = 0;
  double timeout_s = 600;
};

// CLOCK_MONOTONIC: the same clock in every process on the machine, so a
// timestamp written by one process can be compared by another (the runner's
// time.monotonic_ns() for the probe).
int64_t mono_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "loadgen: %s\n", what.c_str());
  std::exit(2);
}

void set(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[512];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK)
    die(std::string(key) + "=" + value + ": " + err);
}

// librdkafka logs every refused connection; the probe makes hundreds on purpose.
void quiet_log(const rd_kafka_t*, int, const char*, const char*) {}
void quiet_error(rd_kafka_t*, int, const char*, void*) {}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mode") o.mode = value();
    else if (a == "--bootstrap") o.bootstrap = value();
    else if (a == "--mock") o.mock = true;
    else if (a == "--topic") o.topic = value();
    else if (a == "--partitions") o.partitions = std::stoi(value());
    else if (a == "--create-topic") o.create_topic = true;
    else if (a == "--skip-fill") o.skip_fill = true;
    else if (a == "--records") o.records = std::stol(value());
    else if (a == "--duration") o.duration_s = std::stod(value());
    else if (a == "--size") o.size = std::stoi(value());
    else if (a == "--keys") o.keys = value();
    else if (a == "--acks") o.acks = value();
    else if (a == "--compression") o.compression = value();
    else if (a == "--idempotence") o.idempotence = true;
    else if (a == "--transaction-records") o.txn_records = std::stol(value());
    else if (a == "--isolation") o.isolation = value();
    else if (a == "--linger-ms") o.linger_ms = value();
    else if (a == "--batch-size") o.batch_size = value();
    else if (a == "--rate") o.rate = std::stod(value());
    else if (a == "--timeout") o.timeout_s = std::stod(value());
    else die("unknown option " + a);
  }
  if (o.mock == !o.bootstrap.empty()) die("give exactly one of --bootstrap HOST:PORT or --mock");
  if (o.mode != "produce" && o.mode != "consume" && o.mode != "e2e" && o.mode != "probe") die("unknown mode " + o.mode);
  if (o.mode == "e2e" && (o.rate <= 0 || o.duration_s <= 0)) die("e2e needs --rate and --duration");
  if ((o.mode == "e2e" || o.mode == "consume") && o.size < 8) die("values carry an 8-byte timestamp: --size 8 or more");
  if (o.mode == "probe" && o.mock) die("probe measures a broker's start; it has no meaning for the mock");
  if (o.skip_fill && o.mock) die("the mock starts empty: it cannot --skip-fill");
  return o;
}

double percentile_ms(std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return static_cast<double>(v[k]) / 1e6;
}

std::string latency_json(const char* prefix, std::vector<int64_t>& ns) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "\"%sp50_ms\":%.3f,\"%sp99_ms\":%.3f,\"%sp999_ms\":%.3f", prefix,
                percentile_ms(ns, 0.5), prefix, percentile_ms(ns, 0.99), prefix, percentile_ms(ns, 0.999));
  return buf;
}

// About 1 MiB of lowercase words from a 512-word vocabulary, fixed seed.
std::string make_text() {
  std::mt19937 rng(20261129);
  std::vector<std::string> words;
  for (int w = 0; w < 512; ++w) {
    std::string s;
    int len = 2 + static_cast<int>(rng() % 9);
    for (int c = 0; c < len; ++c) s += static_cast<char>('a' + rng() % 26);
    words.push_back(s);
  }
  std::string text;
  while (text.size() < (1u << 20)) {
    text += words[rng() % words.size()];
    text += ' ';
  }
  return text;
}

// --- the mock cluster -------------------------------------------------------

struct Mock {
  rd_kafka_t* owner = nullptr;  // the mock cluster lives inside an rd_kafka_t
  rd_kafka_mock_cluster_t* cluster = nullptr;
  std::string bootstrap;

  explicit Mock(const Options& o) {
    char err[512];
    owner = rd_kafka_new(RD_KAFKA_PRODUCER, rd_kafka_conf_new(), err, sizeof err);
    if (!owner) die(std::string("mock owner: ") + err);
    cluster = rd_kafka_mock_cluster_new(owner, 1);
    if (!cluster || rd_kafka_mock_topic_create(cluster, o.topic.c_str(), o.partitions, 1))
      die("cannot start the mock cluster");
    bootstrap = rd_kafka_mock_cluster_bootstraps(cluster);
  }
  ~Mock() {
    rd_kafka_mock_cluster_destroy(cluster);
    rd_kafka_destroy(owner);
  }
};

// --- topic creation -----------------------------------------------------------

// CreateTopics (replication factor 1), then Metadata until every partition has
// a leader: Kafka in KRaft mode creates topics asynchronously.
void create_topic(const Options& o, const std::string& bootstrap) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) die(err);
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(o.topic.c_str(), o.partitions, 1, err, sizeof err);
  if (!nt) die(err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_CreateTopics(rk, &nt, 1, nullptr, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  if (!ev) die("CreateTopics: no answer in 30 s");
  size_t n = 0;
  const rd_kafka_topic_result_t** res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
  if (rd_kafka_event_error(ev)) die(std::string("CreateTopics: ") + rd_kafka_event_error_string(ev));
  for (size_t i = 0; i < n; ++i) {
    rd_kafka_resp_err_t e = rd_kafka_topic_result_error(res[i]);
    if (e && e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) die(std::string("CreateTopics: ") + rd_kafka_err2str(e));
  }
  rd_kafka_event_destroy(ev);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);

  rd_kafka_topic_t* topic = rd_kafka_topic_new(rk, o.topic.c_str(), nullptr);
  int64_t deadline = mono_ns() + 30'000'000'000;
  for (;;) {
    const struct rd_kafka_metadata* md = nullptr;
    bool ready = false;
    if (rd_kafka_metadata(rk, 0, topic, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
      const rd_kafka_metadata_topic_t& t = md->topics[0];
      ready = md->topic_cnt == 1 && !t.err && t.partition_cnt == o.partitions;
      for (int p = 0; ready && p < t.partition_cnt; ++p) ready = !t.partitions[p].err && t.partitions[p].leader >= 0;
      rd_kafka_metadata_destroy(md);
    }
    if (ready) break;
    if (mono_ns() > deadline) die("topic " + o.topic + " has no leader for every partition after 30 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  rd_kafka_topic_destroy(topic);
  rd_kafka_destroy(rk);
}

// --- producer -------------------------------------------------------------------

struct ProduceResult {
  long sent = 0;
  long delivered = 0;
  long failed = 0;
  std::string first_error;
  double seconds = 0;
  std::vector<int64_t> latency_ns;  // send to delivery report, delivered records
  std::vector<int64_t> commit_ns;   // each rd_kafka_commit_transaction (--transaction-records)
};

struct ProduceState {
  std::vector<int64_t> send_ns;  // by record number
  ProduceResult* result;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* st = static_cast<ProduceState*>(opaque);
  if (m->err) {
    if (st->result->failed++ == 0) st->result->first_error = rd_kafka_err2str(m->err);
    return;
  }
  auto index = reinterpret_cast<size_t>(m->_private);
  st->result->latency_ns.push_back(mono_ns() - st->send_ns[index]);
  ++st->result->delivered;
}

// A transactional call that fails ends the run: a benchmark retries nothing.
void transaction_call(const char* what, rd_kafka_error_t* error) {
  if (!error) return;
  std::string text = std::string(what) + ": " + rd_kafka_error_string(error);
  rd_kafka_error_destroy(error);
  die(text);
}

void commit(rd_kafka_t* rk, ProduceResult& result) {
  int64_t t = mono_ns();
  transaction_call("commit_transaction", rd_kafka_commit_transaction(rk, -1));
  result.commit_ns.push_back(mono_ns() - t);
}

rd_kafka_conf_t* producer_conf(const Options& o, const std::string& bootstrap, const std::string& acks) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "acks", acks);
  set(conf, "linger.ms", o.linger_ms);
  set(conf, "compression.codec", o.compression);
  // librdkafka 2.0 wants idempotence named for a transactional producer.
  set(conf, "enable.idempotence", o.idempotence || o.txn_records > 0 ? "true" : "false");
  if (o.txn_records > 0)
    set(conf, "transactional.id", "loadgen-" + o.topic + "-" + std::to_string(static_cast<long>(getpid())));
  set(conf, "queue.buffering.max.messages", "1000000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  if (!o.batch_size.empty()) set(conf, "batch.size", o.batch_size);
  return conf;
}

// Sends records as fast as allowed (or at o.rate) until `records` are sent, or
// for o.duration_s when that is set; then waits for every delivery report.
ProduceResult produce(const Options& o, const std::string& bootstrap, const std::string& acks, long records,
                      std::atomic<bool>* stop_flag = nullptr) {
  ProduceResult result;
  ProduceState state{{}, &result};
  char err[512];
  rd_kafka_conf_t* conf = producer_conf(o, bootstrap, acks);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  rd_kafka_conf_set_opaque(conf, &state);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) die(err);
  rd_kafka_topic_t* topic = rd_kafka_topic_new(rk, o.topic.c_str(), nullptr);

  // Warm up: metadata and connections, outside the measurement.
  const struct rd_kafka_metadata* md = nullptr;
  if (rd_kafka_metadata(rk, 0, topic, &md, 10000) != RD_KAFKA_RESP_ERR_NO_ERROR) die("no metadata for " + o.topic);
  rd_kafka_metadata_destroy(md);
  const bool txn = o.txn_records > 0;
  if (txn) transaction_call("init_transactions", rd_kafka_init_transactions(rk, 60000));
  bool txn_open = false;

  static const std::string text = make_text();
  std::vector<char> value(static_cast<size_t>(o.size));
  char key[32];
  long key_space = (o.keys == "unique" || o.keys == "none") ? 0 : std::stol(o.keys);
  bool by_time = o.duration_s > 0;
  size_t expected = by_time ? static_cast<size_t>(o.rate > 0 ? o.rate * o.duration_s * 1.05 : 1e6) : records;
  state.send_ns.reserve(expected);
  result.latency_ns.reserve(expected);

  int64_t start = mono_ns();
  int64_t end_by = start + static_cast<int64_t>(o.duration_s * 1e9);
  int64_t give_up = start + static_cast<int64_t>(o.timeout_s * 1e9);
  for (long i = 0;; ++i) {
    if (by_time ? mono_ns() >= end_by : i >= records) break;
    if (stop_flag && stop_flag->load()) break;
    if (o.rate > 0) {  // pace: record i is due at start + i / rate
      int64_t due = start + static_cast<int64_t>(static_cast<double>(i) * 1e9 / o.rate);
      for (int64_t now = mono_ns(); now < due; now = mono_ns()) {
        rd_kafka_poll(rk, 0);
        if (due - now > 100'000) std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<int64_t>(due - now, 1'000'000)));
      }
    }
    size_t at = (static_cast<size_t>(i) * 7919) % (text.size() - value.size());
    std::memcpy(value.data(), text.data() + at, value.size());
    int klen = 0;
    if (o.keys == "unique") klen = std::snprintf(key, sizeof key, "%ld", i);
    else if (key_space > 0) klen = std::snprintf(key, sizeof key, "%ld", i % key_space);
    if (txn && !txn_open) {
      transaction_call("begin_transaction", rd_kafka_begin_transaction(rk));
      txn_open = true;
    }
    int64_t sent_at = mono_ns();
    if (value.size() >= 8) std::memcpy(value.data(), &sent_at, 8);
    state.send_ns.push_back(sent_at);
    while (rd_kafka_produce(topic, static_cast<int32_t>(i % o.partitions), RD_KAFKA_MSG_F_COPY, value.data(),
                            value.size(), klen ? key : nullptr, static_cast<size_t>(klen),
                            reinterpret_cast<void*>(i)) == -1) {
      if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
        die(std::string("produce: ") + rd_kafka_err2str(rd_kafka_last_error()));
      rd_kafka_poll(rk, 1);
      if (mono_ns() > give_up) die("producer queue still full at --timeout");
    }
    ++result.sent;
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
    if (txn && result.sent % o.txn_records == 0) {
      commit(rk, result);
      txn_open = false;
    }
  }
  if (txn_open) commit(rk, result);
  while (rd_kafka_outq_len(rk) > 0 && mono_ns() < give_up) rd_kafka_poll(rk, 10);
  result.seconds = static_cast<double>(mono_ns() - start) / 1e9;
  if (rd_kafka_outq_len(rk) > 0) {
    result.failed += rd_kafka_outq_len(rk);
    if (result.first_error.empty()) result.first_error = "not delivered within --timeout";
    rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    rd_kafka_poll(rk, 100);
  }
  rd_kafka_topic_destroy(topic);
  rd_kafka_destroy(rk);
  return result;
}

std::string produce_json(const char* name, const Options& o, ProduceResult& r) {
  std::string txn;
  if (!r.commit_ns.empty())
    txn = ",\"transactions\":" + std::to_string(r.commit_ns.size()) + "," + latency_json("commit_", r.commit_ns);
  double rps = static_cast<double>(r.delivered) / r.seconds;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\"%s\":{\"sent\":%ld,\"delivered\":%ld,\"failed\":%ld,\"seconds\":%.3f,\"records_per_s\":%.0f,"
                "\"mb_per_s\":%.2f,",
                name, r.sent, r.delivered, r.failed, r.seconds, rps, rps * o.size / 1e6);
  std::string s = buf + latency_json("", r.latency_ns) + txn;
  if (r.failed) s += ",\"first_error\":\"" + r.first_error + "\"";
  return s + "}";
}

// --- consumer ---------------------------------------------------------------------

struct ConsumeResult {
  long records = 0;
  long bytes = 0;  // values only, like the producer's MB/s
  int passes = 0;
  double seconds = 0;
  std::string error;
  std::vector<int64_t> e2e_ns;  // produce (the value's timestamp) to consume
};

rd_kafka_t* new_consumer(const Options& o, const std::string& bootstrap) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", bootstrap);
  set(conf, "isolation.level", o.isolation);
  set(conf, "group.id", "loadgen");  // assign() needs one; nothing is committed
  set(conf, "enable.auto.commit", "false");
  set(conf, "enable.auto.offset.store", "false");
  set(conf, "enable.partition.eof", "true");
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) die(err);
  rd_kafka_poll_set_consumer(rk);
  return rk;
}

// Assigns every partition at its low watermark (the mock may have dropped
// the start of the log) or at offset 0.
void assign_from_start(rd_kafka_t* rk, const Options& o, bool query_low) {
  rd_kafka_topic_partition_list_t* parts = rd_kafka_topic_partition_list_new(o.partitions);
  for (int p = 0; p < o.partitions; ++p) {
    int64_t low = 0, high = 0;
    if (query_low) rd_kafka_query_watermark_offsets(rk, o.topic.c_str(), p, &low, &high, 10000);
    rd_kafka_topic_partition_list_add(parts, o.topic.c_str(), p)->offset = low;
  }
  rd_kafka_assign(rk, parts);
  rd_kafka_topic_partition_list_destroy(parts);
}

// Reads until `target` records are in (target < 0: until *stop is set and the
// reader has caught up with `*produced`). With `reread`, each time every
// partition reaches its end the reader starts over from the low watermarks.
ConsumeResult consume(const Options& o, const std::string& bootstrap, long target, bool reread, bool e2e,
                      std::atomic<bool>* assigned = nullptr, std::atomic<long>* produced = nullptr,
                      std::atomic<bool>* producer_done = nullptr) {
  ConsumeResult r;
  rd_kafka_t* rk = new_consumer(o, bootstrap);
  rd_kafka_queue_t* q = rd_kafka_queue_get_consumer(rk);
  int64_t start = mono_ns();
  int64_t give_up = start + static_cast<int64_t>(o.timeout_s * 1e9);
  assign_from_start(rk, o, reread);
  r.passes = 1;
  if (assigned) assigned->store(true);
  std::vector<bool> eof(static_cast<size_t>(o.partitions), false);
  std::vector<rd_kafka_message_t*> batch(4096);
  for (;;) {
    if (target >= 0 && r.records >= target) break;
    if (target < 0 && producer_done->load() && r.records >= produced->load()) break;
    int64_t now = mono_ns();
    if (now > give_up) {
      r.error = "timed out after " + std::to_string(r.records) + " records";
      break;
    }
    ssize_t n = rd_kafka_consume_batch_queue(q, 100, batch.data(), batch.size());
    if (n < 0) {
      r.error = rd_kafka_err2str(rd_kafka_last_error());
      break;
    }
    int64_t got_at = mono_ns();
    for (ssize_t k = 0; k < n; ++k) {
      rd_kafka_message_t* m = batch[static_cast<size_t>(k)];
      if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        eof[static_cast<size_t>(m->partition)] = true;
      } else if (m->err) {
        if (r.error.empty()) r.error = rd_kafka_message_errstr(m);
      } else {
        ++r.records;
        r.bytes += static_cast<long>(m->len);
        if (e2e && m->len >= 8) {
          int64_t sent_at;
          std::memcpy(&sent_at, m->payload, 8);
          r.e2e_ns.push_back(got_at - sent_at);
        }
      }
      rd_kafka_message_destroy(m);
    }
    if (reread && r.records < target && std::all_of(eof.begin(), eof.end(), [](bool b) { return b; })) {
      std::fill(eof.begin(), eof.end(), false);
      assign_from_start(rk, o, true);
      ++r.passes;
    }
  }
  r.seconds = static_cast<double>(mono_ns() - start) / 1e9;
  rd_kafka_queue_destroy(q);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return r;
}

std::string consume_json(const char* name, ConsumeResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "\"%s\":{\"records\":%ld,\"bytes\":%ld,\"passes\":%d,\"seconds\":%.3f,\"records_per_s\":%.0f,"
                "\"mb_per_s\":%.2f",
                name, r.records, r.bytes, r.passes, r.seconds, static_cast<double>(r.records) / r.seconds,
                static_cast<double>(r.bytes) / r.seconds / 1e6);
  std::string s = buf;
  if (!r.e2e_ns.empty()) s += "," + latency_json("e2e_", r.e2e_ns);
  if (!r.error.empty()) s += ",\"error\":\"" + r.error + "\"";
  return s + "}";
}

// --- probe ------------------------------------------------------------------------

// True once a TCP connection to host:port is accepted (the broker listens).
bool port_open(const std::string& bootstrap) {
  auto colon = bootstrap.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(bootstrap.substr(colon + 1))));
  if (inet_pton(AF_INET, bootstrap.substr(0, colon).c_str(), &addr.sin_addr) != 1) die("probe needs an IPv4 address");
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

// One producer with a fresh state: tries to get one record acknowledged
// within `window_ns`; returns the time of the acknowledgement or 0.
int64_t probe_once(const Options& o, int64_t window_ns) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", o.bootstrap);
  set(conf, "acks", o.acks);
  set(conf, "linger.ms", "0");
  set(conf, "reconnect.backoff.ms", "1");
  set(conf, "reconnect.backoff.max.ms", "5");
  set(conf, "retry.backoff.ms", "5");
  set(conf, "topic.metadata.refresh.fast.interval.ms", "5");
  rd_kafka_conf_set_log_cb(conf, quiet_log);
  rd_kafka_conf_set_error_cb(conf, quiet_error);
  std::atomic<int64_t> acked_at{0};
  rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
    if (!m->err) static_cast<std::atomic<int64_t>*>(opaque)->store(mono_ns());
  });
  rd_kafka_conf_set_opaque(conf, &acked_at);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) die(err);
  rd_kafka_topic_t* topic = rd_kafka_topic_new(rk, o.topic.c_str(), nullptr);
  int64_t until = mono_ns() + window_ns;
  while (!acked_at.load() && mono_ns() < until) {
    if (rd_kafka_outq_len(rk) == 0)
      rd_kafka_produce(topic, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, const_cast<char*>("probe"), 5, nullptr, 0,
                       nullptr);
    rd_kafka_poll(rk, 1);
  }
  rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(rk, 0);
  rd_kafka_topic_destroy(topic);
  rd_kafka_destroy(rk);
  return acked_at.load();
}

// Waits (1 ms steps) until the broker accepts connections, then produces with
// a fresh client per attempt, each allowed twice as long as the one before
// (100 ms first). librdkafka left to retry on its own re-checks unreachable
// brokers and unknown topics on a 1-second timer, which would hide a fast
// broker's start behind the client's clock.
int probe(const Options& o) {
  std::fprintf(stderr, "loadgen: probing\n");  // the runner starts the broker after this line
  std::fflush(stderr);
  int64_t give_up = mono_ns() + static_cast<int64_t>(o.timeout_s * 1e9);
  while (!port_open(o.bootstrap) && mono_ns() < give_up) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  int64_t at = 0, window = 100'000'000;
  long attempts = 0;
  while (!at && mono_ns() < give_up) {
    ++attempts;
    at = probe_once(o, std::min(window, give_up - mono_ns()));
    window *= 2;
  }
  std::printf("{\"mode\":\"probe\",\"acked\":%s,\"acked_at_monotonic_ns\":%lld,\"attempts\":%ld}\n",
              at ? "true" : "false", static_cast<long long>(at), attempts);
  return at ? 0 : 1;
}

std::string params_json(const Options& o) {
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "\"mode\":\"%s\",\"target\":\"%s\",\"topic\":\"%s\",\"partitions\":%d,\"size\":%d,\"keys\":\"%s\","
                "\"acks\":\"%s\",\"compression\":\"%s\",\"idempotence\":%s,\"linger_ms\":%s,\"batch_size\":\"%s\","
                "\"rate\":%.0f,\"duration_s\":%.1f,\"transaction_records\":%ld,\"isolation\":\"%s\"",
                o.mode.c_str(), o.mock ? "mock" : "broker", o.topic.c_str(), o.partitions, o.size, o.keys.c_str(),
                o.acks.c_str(), o.compression.c_str(), o.idempotence ? "true" : "false", o.linger_ms.c_str(),
                o.batch_size.c_str(), o.rate, o.duration_s, o.txn_records, o.isolation.c_str());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  if (o.mode == "probe") return probe(o);

  Mock* mock = o.mock ? new Mock(o) : nullptr;
  std::string bootstrap = mock ? mock->bootstrap : o.bootstrap;
  if (!mock && o.create_topic) create_topic(o, bootstrap);

  std::string out = "{" + params_json(o);
  bool ok = true;
  if (o.mode == "produce") {
    ProduceResult r = produce(o, bootstrap, o.acks, o.records);
    out += "," + produce_json("produce", o, r);
    ok = r.failed == 0 && r.delivered > 0;
    if (r.failed) std::fprintf(stderr, "loadgen: %ld failed, first: %s\n", r.failed, r.first_error.c_str());
  } else if (o.mode == "consume") {
    ProduceResult fill;
    if (o.skip_fill) {
      fill.delivered = o.records;  // the topic already holds them
    } else {
      // A transactional fill needs acks=all (librdkafka refuses less).
      fill = produce(o, bootstrap, o.txn_records > 0 ? "all" : "1", o.records);
      out += "," + produce_json("fill", o, fill);
    }
    // Against a broker, read exactly what was acknowledged; against the
    // mock, the same number of records from what it kept.
    ConsumeResult c = consume(o, bootstrap, mock ? o.records : fill.delivered, mock != nullptr, false);
    out += "," + consume_json("consume", c);
    ok = fill.failed == 0 && c.error.empty();
  } else {  // e2e
    std::atomic<bool> assigned{false}, producer_done{false};
    std::atomic<long> produced{0};
    ConsumeResult c;
    std::thread reader([&] { c = consume(o, bootstrap, -1, false, true, &assigned, &produced, &producer_done); });
    while (!assigned.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::seconds(1));  // let the consumer's first fetches start
    ProduceResult p = produce(o, bootstrap, o.acks, 0);
    produced.store(p.delivered);
    producer_done.store(true);
    reader.join();
    out += "," + produce_json("produce", o, p);
    out += "," + consume_json("consume", c);
    ok = p.failed == 0 && c.error.empty();
  }
  std::printf("%s,\"ok\":%s}\n", out.c_str(), ok ? "true" : "false");
  std::fflush(stdout);
  delete mock;
  return ok ? 0 : 1;
}
