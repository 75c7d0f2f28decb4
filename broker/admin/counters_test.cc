#include "broker/admin/counters.h"
#include "broker/admin/request_metrics.h"

#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/messages/all_apis.h"

namespace runnel::broker::admin {
namespace {

TEST_CASE("topic counters add records and bytes in, and bytes out", "[admin]") {
  TopicCounters c;
  c.count_in(3, 210);
  c.count_in(1, 70);
  c.count_out(500);
  CHECK(c.messages_in.load() == 4);
  CHECK(c.bytes_in.load() == 280);
  CHECK(c.bytes_out.load() == 500);
}

TEST_CASE("request counters count each API key and version apart", "[admin]") {
  RequestCounters r;
  CHECK(r.get(0, 9) == 0);
  r.count(0, 9);
  r.count(0, 9);
  r.count(0, 10);
  r.count(3, 12);
  CHECK(r.get(0, 9) == 2);
  CHECK(r.get(0, 10) == 1);
  CHECK(r.get(3, 12) == 1);
  CHECK(r.get(3, 9) == 0);
  CHECK(r.get(1, 9) == 0);
}

TEST_CASE("request counters ignore keys and versions outside their table", "[admin]") {
  RequestCounters r;
  r.count(-1, 0);
  r.count(RequestCounters::kApiKeys, 0);
  r.count(0, RequestCounters::kVersions);
  r.count(0, -1);
  CHECK(r.get(-1, 0) == 0);
  CHECK(r.get(RequestCounters::kApiKeys, 0) == 0);
  for (int16_t v = 0; v < RequestCounters::kVersions; ++v) CHECK(r.get(0, v) == 0);
  r.count(RequestCounters::kApiKeys - 1, RequestCounters::kVersions - 1);
  CHECK(r.get(RequestCounters::kApiKeys - 1, RequestCounters::kVersions - 1) == 1);
}

TEST_CASE("counts from several threads are all kept", "[admin]") {
  TopicCounters c;
  RequestCounters r;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        c.count_in(1, 10);
        r.count(1, 13);
      }
    });
  for (auto& t : threads) t.join();
  CHECK(c.messages_in.load() == 40000);
  CHECK(c.bytes_in.load() == 400000);
  CHECK(r.get(1, 13) == 40000);
}

TEST_CASE("error counters count every error code of a response, nested ones included", "[admin]") {
  protocol::ProduceResponse r;
  r.responses.resize(2);
  r.responses[0].partition_responses.resize(1000);  // all NONE
  r.responses[1].partition_responses.resize(3);
  r.responses[1].partition_responses[1].error_code = 6;   // NOT_LEADER_OR_FOLLOWER
  r.responses[1].partition_responses[2].error_code = -1;  // UNKNOWN_SERVER_ERROR
  ErrorCounters e;
  e.count_response(protocol::ProduceApi::key, r);
  CHECK(e.get(0, 0) == 1001);
  CHECK(e.get(0, 6) == 1);
  CHECK(e.get(0, -1) == 1);
  CHECK(e.get(1, 0) == 0);
  // The top-level code and each partition's, as Kafka's FetchResponse.errorCounts.
  protocol::FetchResponse f;
  f.error_code = 0;
  f.responses.resize(1);
  f.responses[0].partitions.resize(2);
  f.responses[0].partitions[1].error_code = 1;  // OFFSET_OUT_OF_RANGE
  e.count_response(protocol::FetchApi::key, f);
  CHECK(e.get(1, 0) == 2);
  CHECK(e.get(1, 1) == 1);
}

TEST_CASE("error counters keep a response's many distinct codes, past their tally's slots", "[admin]") {
  protocol::ProduceResponse r;
  r.responses.resize(1);
  r.responses[0].partition_responses.resize(40);
  for (int i = 0; i < 40; ++i) r.responses[0].partition_responses[static_cast<size_t>(i)].error_code = int16_t(i % 20);
  ErrorCounters e;
  e.count_response(protocol::ProduceApi::key, r);
  for (int16_t code = 0; code < 20; ++code) CHECK(e.get(0, code) == 2);
  e.count(0, ErrorCounters::kMaxError + 1);  // outside the table: dropped
  e.count(0, -2);
  CHECK(e.get(0, ErrorCounters::kMaxError + 1) == 0);
}

TEST_CASE("request times fall in their millisecond buckets, by API and version", "[admin]") {
  using namespace std::chrono;
  RequestTimes t;
  t.record(0, 9, microseconds(300));    // <= 0.5 ms
  t.record(0, 9, microseconds(1500));   // <= 2 ms
  t.record(0, 9, milliseconds(20000));  // +Inf
  t.record(0, 10, milliseconds(3));
  t.record(200, 0, milliseconds(1));  // outside the table
  const Histogram* h = t.get(0, 9);
  REQUIRE(h);
  CHECK(h->cumulative(0) == 1);
  CHECK(h->cumulative(1) == 1);
  CHECK(h->cumulative(2) == 2);
  CHECK(h->cumulative(RequestTimes::kBucketsMs.size() - 1) == 2);
  CHECK(h->count(RequestTimes::kBucketsMs) == 3);
  CHECK(h->sum() == Approx(20001.8));
  CHECK(t.get(0, 10)->count(RequestTimes::kBucketsMs) == 1);
  CHECK(t.get(200, 0) == nullptr);
}

}  // namespace
}  // namespace runnel::broker::admin
