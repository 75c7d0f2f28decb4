#include "broker/admin/counters.h"

#include <thread>
#include <vector>

#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace runnel::broker::admin
