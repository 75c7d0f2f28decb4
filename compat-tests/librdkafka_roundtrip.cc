// librdkafka against a real Runnel: produce N records (keys, headers,
// explicit CreateTime timestamps) across 6 partitions with acks=all, read
// every one back and check it exactly (key, value, headers, timestamp,
// offset = per-partition sequence: order, no gap, no duplicate). Then the
// broker is SIGKILLed and restarted on the same log dir (every acknowledged
// acks=all record must still be there), then restarted gracefully, and the
// check runs again each time.
//
// usage: librdkafka_roundtrip <runnel binary> [records]   (default 1000000)
#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runnel_process.h"

using runnel::compat::RunnelProcess;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kPartitions = 6;
const char* kTopic = "roundtrip";
// An hour ago: explicit CreateTime timestamps the broker must keep as sent.
const int64_t kBaseTimestamp =
    std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count() -
    3600 * 1000;

// Record i goes to partition i % 6 as that partition's record number i / 6,
// so a partition's offsets must equal its sequence numbers.
struct Expected {
  bool key_null;
  std::string key;
  bool value_null;
  std::string value;
  struct Header {
    std::string name;
    bool null;
    std::string value;
  };
  std::vector<Header> headers;
  int64_t timestamp;
};

Expected expected(int32_t partition, int64_t seq) {
  Expected e;
  e.key_null = seq % 101 == 7;
  if (!e.key_null) e.key = "key-" + std::to_string(partition) + "-" + std::to_string(seq);
  e.value_null = seq % 1009 == 3;
  if (!e.value_null) {
    size_t len = static_cast<size_t>((seq * 31 + partition * 7) % 181);
    e.value.resize(len);
    uint32_t x = static_cast<uint32_t>(seq * 2654435761u + static_cast<uint32_t>(partition) * 40503u + 1);
    for (size_t j = 0; j < len; ++j) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      e.value[j] = static_cast<char>(x);
    }
  }
  e.headers.push_back({"seq", false, std::to_string(seq)});
  e.headers.push_back({"partition", false, std::to_string(partition)});
  if (seq % 3 == 0) e.headers.push_back({"empty", false, ""});
  if (seq % 5 == 0) e.headers.push_back({"null", true, ""});
  if (seq % 7 == 0) e.headers.push_back({"seq", false, "again"});  // duplicate names keep their order
  e.timestamp = kBaseTimestamp + seq * kPartitions + partition;
  return e;
}

[[noreturn]] void die(RunnelProcess& broker, const std::string& what) { broker.fail(what); }

rd_kafka_conf_t* base_conf(const RunnelProcess& broker) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const char* k, const std::string& v) {
    if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      std::fprintf(stderr, "conf %s: %s\n", k, err);
      std::exit(2);
    }
  };
  set("bootstrap.servers", broker.bootstrap());
  set("broker.address.family", "v4");
  return conf;
}

void set_conf(rd_kafka_conf_t* conf, const char* k, const std::string& v) {
  char err[512];
  if (rd_kafka_conf_set(conf, k, v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
    std::fprintf(stderr, "conf %s: %s\n", k, err);
    std::exit(2);
  }
}

void create_topic(RunnelProcess& broker) {
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, base_conf(broker), err, sizeof err);
  if (!rk) die(broker, std::string("rd_kafka_new: ") + err);
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(kTopic, kPartitions, 1, err, sizeof err);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  rd_kafka_AdminOptions_t* opts = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
  rd_kafka_AdminOptions_set_operation_timeout(opts, 10000, err, sizeof err);
  rd_kafka_CreateTopics(rk, &nt, 1, opts, q);
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  std::string failure;
  if (!ev) {
    failure = "CreateTopics: no result in 30 s";
  } else if (rd_kafka_event_error(ev)) {
    failure = std::string("CreateTopics: ") + rd_kafka_event_error_string(ev);
  } else {
    size_t n;
    const rd_kafka_topic_result_t** res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    if (n != 1 || rd_kafka_topic_result_error(res[0]))
      failure = std::string("CreateTopics: ") + (n ? rd_kafka_topic_result_error_string(res[0]) : "no topic result");
  }
  if (ev) rd_kafka_event_destroy(ev);
  rd_kafka_AdminOptions_destroy(opts);
  rd_kafka_NewTopic_destroy(nt);
  rd_kafka_queue_destroy(q);
  rd_kafka_destroy(rk);
  if (!failure.empty()) die(broker, failure);
}

struct DeliveryState {
  int64_t delivered = 0;
  int64_t failed = 0;
  std::string first_error;
};

void on_delivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* st = static_cast<DeliveryState*>(opaque);
  if (m->err) {
    if (st->failed++ == 0) st->first_error = rd_kafka_err2str(m->err);
  } else {
    ++st->delivered;
  }
}

void produce_all(RunnelProcess& broker, int64_t records) {
  rd_kafka_conf_t* conf = base_conf(broker);
  set_conf(conf, "acks", "all");
  set_conf(conf, "linger.ms", "5");
  set_conf(conf, "message.timeout.ms", "120000");
  DeliveryState st;
  rd_kafka_conf_set_opaque(conf, &st);
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (!rk) die(broker, std::string("rd_kafka_new: ") + err);

  const auto start = Clock::now();
  for (int64_t i = 0; i < records; ++i) {
    int32_t partition = static_cast<int32_t>(i % kPartitions);
    Expected e = expected(partition, i / kPartitions);
    rd_kafka_headers_t* hdrs = rd_kafka_headers_new(e.headers.size());
    for (auto& h : e.headers)
      rd_kafka_header_add(hdrs, h.name.data(), static_cast<ssize_t>(h.name.size()), h.null ? nullptr : h.value.data(),
                          h.null ? 0 : static_cast<ssize_t>(h.value.size()));
    for (;;) {
      rd_kafka_resp_err_t rc = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(kTopic), RD_KAFKA_V_PARTITION(partition), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
          RD_KAFKA_V_KEY(e.key_null ? nullptr : e.key.data(), e.key_null ? 0 : e.key.size()),
          RD_KAFKA_V_VALUE(e.value_null ? nullptr : e.value.data(), e.value_null ? 0 : e.value.size()),
          RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_TIMESTAMP(e.timestamp), RD_KAFKA_V_END);
      if (rc == RD_KAFKA_RESP_ERR_NO_ERROR) break;  // the message owns hdrs now
      if (rc != RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_headers_destroy(hdrs);
        die(broker, std::string("produce: ") + rd_kafka_err2str(rc));
      }
      rd_kafka_poll(rk, 50);
      if (Clock::now() - start > std::chrono::minutes(5)) die(broker, "produce: queue stayed full for minutes");
    }
    rd_kafka_poll(rk, 0);
  }
  rd_kafka_resp_err_t rc = rd_kafka_flush(rk, 180000);
  rd_kafka_destroy(rk);
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("produced %" PRId64 " records with acks=all in %.1f s (%.0f records/s)\n", records, secs,
              static_cast<double>(records) / secs);
  if (rc) die(broker, std::string("flush: ") + rd_kafka_err2str(rc));
  if (st.failed)
    die(broker, std::to_string(st.failed) + " deliveries failed, first: " + st.first_error);
  if (st.delivered != records)
    die(broker, "only " + std::to_string(st.delivered) + " of " + std::to_string(records) + " deliveries reported");
}

std::string check_message(const rd_kafka_message_t* m, int64_t seq) {
  Expected e = expected(m->partition, seq);
  auto at = "partition " + std::to_string(m->partition) + " offset " + std::to_string(m->offset) + ": ";
  if (m->offset != seq) return at + "expected offset " + std::to_string(seq) + " (a gap, a duplicate or a reorder)";
  if (e.key_null != (m->key == nullptr)) return at + "key nullness differs";
  if (!e.key_null && std::string(static_cast<const char*>(m->key), m->key_len) != e.key) return at + "key differs";
  if (e.value_null != (m->payload == nullptr)) return at + "value nullness differs";
  if (!e.value_null && std::string(static_cast<const char*>(m->payload), m->len) != e.value) return at + "value differs";
  rd_kafka_timestamp_type_t tstype;
  int64_t ts = rd_kafka_message_timestamp(m, &tstype);
  if (tstype != RD_KAFKA_TIMESTAMP_CREATE_TIME) return at + "timestamp type is not CreateTime";
  if (ts != e.timestamp) return at + "timestamp " + std::to_string(ts) + " != " + std::to_string(e.timestamp);
  rd_kafka_headers_t* hdrs = nullptr;
  rd_kafka_resp_err_t herr = rd_kafka_message_headers(m, &hdrs);
  size_t count = herr == RD_KAFKA_RESP_ERR_NO_ERROR ? rd_kafka_header_cnt(hdrs) : 0;
  if (count != e.headers.size())
    return at + std::to_string(count) + " headers, expected " + std::to_string(e.headers.size());
  for (size_t i = 0; i < count; ++i) {
    const char* name;
    const void* value;
    size_t size;
    rd_kafka_header_get_all(hdrs, i, &name, &value, &size);
    const auto& h = e.headers[i];
    if (h.name != name) return at + "header " + std::to_string(i) + " name differs";
    if (h.null != (value == nullptr)) return at + "header " + h.name + " nullness differs";
    if (!h.null && std::string(static_cast<const char*>(value), size) != h.value) return at + "header " + h.name + " value differs";
  }
  return {};
}

// Reads every partition from the beginning (no group: the simple consumer
// API) until each has delivered its expected count and reported its end.
void consume_and_check(RunnelProcess& broker, int64_t records, const char* when) {
  rd_kafka_conf_t* conf = base_conf(broker);
  set_conf(conf, "enable.partition.eof", "true");
  set_conf(conf, "fetch.wait.max.ms", "100");
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (!rk) die(broker, std::string("rd_kafka_new: ") + err);
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, kTopic, nullptr);
  rd_kafka_queue_t* q = rd_kafka_queue_new(rk);
  for (int32_t p = 0; p < kPartitions; ++p)
    if (rd_kafka_consume_start_queue(rkt, p, RD_KAFKA_OFFSET_BEGINNING, q) != 0)
      die(broker, std::string("consume_start: ") + rd_kafka_err2str(rd_kafka_last_error()));

  int64_t want[kPartitions], next[kPartitions] = {};
  bool at_end[kPartitions] = {};
  for (int32_t p = 0; p < kPartitions; ++p) want[p] = records / kPartitions + (p < records % kPartitions ? 1 : 0);
  std::string failure;
  int done = 0;
  std::vector<rd_kafka_message_t*> batch(1000);
  const auto start = Clock::now();
  while (done < kPartitions && failure.empty()) {
    if (Clock::now() - start > std::chrono::minutes(4)) {
      failure = "consume timed out:";
      for (int32_t p = 0; p < kPartitions; ++p) failure += " p" + std::to_string(p) + "=" + std::to_string(next[p]);
      break;
    }
    ssize_t n = rd_kafka_consume_batch_queue(q, 100, batch.data(), batch.size());
    if (n < 0) {
      failure = std::string("consume: ") + rd_kafka_err2str(rd_kafka_last_error());
      break;
    }
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* m = batch[static_cast<size_t>(i)];
      if (failure.empty()) {
        int32_t p = m->partition;
        if (p < 0 || p >= kPartitions) {
          failure = "message from unknown partition " + std::to_string(p);
        } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          if (next[p] == want[p] && !at_end[p]) {
            at_end[p] = true;
            ++done;
          }
        } else if (m->err) {
          failure = "partition " + std::to_string(p) + ": " + rd_kafka_message_errstr(m);
        } else if (next[p] >= want[p]) {
          failure = "partition " + std::to_string(p) + ": record beyond the " + std::to_string(want[p]) + " produced";
        } else {
          failure = check_message(m, next[p]);
          ++next[p];
        }
      }
      rd_kafka_message_destroy(m);
    }
  }
  for (int32_t p = 0; p < kPartitions; ++p) rd_kafka_consume_stop(rkt, p);
  rd_kafka_queue_destroy(q);
  rd_kafka_topic_destroy(rkt);
  rd_kafka_destroy(rk);
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  if (!failure.empty()) die(broker, std::string(when) + ": " + failure);
  std::printf("%s: consumed and checked %" PRId64 " records in %.1f s\n", when, records, secs);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <runnel binary> [records]\n", argv[0]);
    return 2;
  }
  const int64_t records = argc > 2 ? std::stoll(argv[2]) : 1000000;
  try {
    RunnelProcess broker(argv[1]);
    broker.start();
    create_topic(broker);
    produce_all(broker, records);
    consume_and_check(broker, records, "after produce");

    broker.restart(/*graceful=*/false);
    consume_and_check(broker, records, "after SIGKILL and restart");

    broker.restart(/*graceful=*/true);
    consume_and_check(broker, records, "after graceful restart");
    int status = broker.stop();
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) broker.fail("final SIGTERM did not exit 0");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("1 passed, 0 failed\n");
  return 0;
}
