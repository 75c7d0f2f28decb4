#include "broker/fetch_session.h"

#include <catch2/catch.hpp>

namespace runnel::broker {
namespace {

using namespace std::chrono_literals;
using Clock = FetchSessionCache::Clock;
using PartitionData = p::FetchResponse::FetchableTopicResponse::PartitionData;

FetchItem item(const std::string& topic, int32_t partition, int64_t offset = 0) {
  FetchItem i;
  i.topic = topic;
  i.partition = partition;
  i.fetch_offset = offset;
  i.max_bytes = 1 << 20;
  return i;
}

std::list<CachedPartition> parts(size_t n) {
  std::list<CachedPartition> out;
  for (size_t i = 0; i < n; ++i) out.push_back({item("t", static_cast<int32_t>(i)), 0, 0});
  return out;
}

std::vector<int32_t> order(FetchSession& s) {
  std::vector<int32_t> out;
  for (const auto& cp : s.partitions()) out.push_back(cp.request.partition);
  return out;
}

TEST_CASE("fetch epochs follow Kafka's FetchMetadata.nextEpoch", "[broker][fetch-session]") {
  CHECK(next_fetch_epoch(0) == 1);
  CHECK(next_fetch_epoch(41) == 42);
  CHECK(next_fetch_epoch(INT32_MAX) == 1);  // 0 would mean a new session
  CHECK(next_fetch_epoch(-1) == -1);
}

TEST_CASE("a partition is named by topic id when it has one", "[broker][fetch-session]") {
  FetchItem by_id = item("", 3);
  by_id.topic_id.bytes[0] = 7;
  FetchItem named = by_id;
  named.topic = "orders";  // the same partition once its name is known
  CHECK(FetchKey::of(by_id) == FetchKey::of(named));
  CHECK(FetchKey::of(item("a", 0)) != FetchKey::of(item("b", 0)));
  CHECK(FetchKey::of(item("a", 0)) != FetchKey::of(item("a", 1)));
}

TEST_CASE("a session adds, updates and forgets partitions", "[broker][fetch-session]") {
  FetchSession s(9, false, false, Clock::now(), parts(3));
  CHECK(s.epoch() == 1);
  std::vector<FetchItem> changes = {item("t", 1, 500), item("u", 0, 7)};
  std::vector<FetchKey> forgotten = {FetchKey::of(item("t", 0)), FetchKey::of(item("v", 9))};
  s.update(changes, forgotten);
  CHECK(order(s) == std::vector<int32_t>{1, 2, 0});
  CHECK(s.find(FetchKey::of(item("t", 0))) == nullptr);
  REQUIRE(s.find(FetchKey::of(item("t", 1))) != nullptr);
  CHECK(s.find(FetchKey::of(item("t", 1)))->request.fetch_offset == 500);
  CachedPartition* added = s.find(FetchKey::of(item("u", 0)));
  REQUIRE(added != nullptr);
  CHECK(added->high_watermark == -1);  // nothing told of it yet
  s.move_to_back(FetchKey::of(item("t", 1)));
  CHECK(order(s) == std::vector<int32_t>{2, 0, 1});
  s.advance_epoch();
  CHECK(s.epoch() == 2);
}

TEST_CASE("an incremental response carries only what changed", "[broker][fetch-session]") {
  CachedPartition cp{item("t", 0), 100, 5};
  PartitionData same;
  same.high_watermark = 100;
  same.log_start_offset = 5;
  same.records = p::Records::view({});
  CHECK_FALSE(cp.must_respond(same, true));

  PartitionData moved = same;
  moved.high_watermark = 120;
  CHECK(cp.must_respond(moved, false));
  CHECK(cp.high_watermark == 100);  // not remembered when only asked
  CHECK(cp.must_respond(moved, true));
  CHECK(cp.high_watermark == 120);
  CHECK_FALSE(cp.must_respond(moved, true));

  const uint8_t batch[8] = {};
  PartitionData with_records = moved;
  with_records.records = p::Records::view(p::ByteView(batch, sizeof batch));
  CHECK(cp.must_respond(with_records, true));

  PartitionData failed = moved;
  failed.error_code = 6;  // NOT_LEADER_OR_FOLLOWER
  CHECK(cp.must_respond(failed, true));
  CHECK(cp.high_watermark == -1);  // so the partition is sent again once it recovers
  CHECK(cp.must_respond(moved, true));

  PartitionData diverging = moved;
  diverging.diverging_epoch.epoch = 3;
  CHECK(cp.must_respond(diverging, true));
  PartitionData truncated = moved;
  truncated.log_start_offset = 9;
  CHECK(cp.must_respond(truncated, true));
}

TEST_CASE("the cache makes sessions while it has slots", "[broker][fetch-session]") {
  FetchSessionCache cache(2);
  const auto t0 = Clock::now();
  const int32_t a = cache.maybe_create(t0, false, false, parts(4));
  const int32_t b = cache.maybe_create(t0, false, false, parts(4));
  CHECK(a > 0);
  CHECK(b > 0);
  CHECK(a != b);
  CHECK(cache.size() == 2);
  CHECK(cache.partitions_cached() == 8);
  // Full, nothing old and nothing smaller: no session for a consumer.
  CHECK(cache.maybe_create(t0 + 1s, false, false, parts(4)) == 0);
  REQUIRE(cache.get(a) != nullptr);
  CHECK(cache.get(a)->epoch() == 1);
  CHECK(cache.remove(a));
  CHECK_FALSE(cache.remove(a));
  CHECK(cache.get(a) == nullptr);
  CHECK(cache.partitions_cached() == 4);
  CHECK(cache.maybe_create(t0 + 1s, false, false, parts(1)) > 0);

  FetchSessionCache none(0);
  CHECK(none.maybe_create(t0, true, false, parts(1)) == 0);
}

TEST_CASE("eviction follows Kafka's tryEvict", "[broker][fetch-session]") {
  const auto t0 = Clock::now();
  SECTION("a stale session makes room for anyone") {
    FetchSessionCache cache(1, 1000ms);
    const int32_t old = cache.maybe_create(t0, true, false, parts(50));
    const int32_t fresh = cache.maybe_create(t0 + 1001ms, false, false, parts(1));
    CHECK(fresh > 0);
    CHECK(cache.get(old) == nullptr);
    CHECK(cache.evictions() == 1);
  }
  SECTION("a follower evicts a consumer's session at once") {
    FetchSessionCache cache(1, 1000ms);
    const int32_t consumer = cache.maybe_create(t0, false, false, parts(50));
    CHECK(cache.maybe_create(t0 + 10ms, true, false, parts(1)) > 0);
    CHECK(cache.get(consumer) == nullptr);
  }
  SECTION("a consumer evicts a smaller session only once it is mature") {
    FetchSessionCache cache(1, 1000ms);
    const int32_t small = cache.maybe_create(t0, false, false, parts(2));
    CHECK(cache.maybe_create(t0 + 10ms, false, false, parts(10)) == 0);  // too young to evict
    cache.touch(*cache.get(small), t0 + 900ms);
    CHECK(cache.maybe_create(t0 + 950ms, false, false, parts(10)) == 0);  // still young
    cache.touch(*cache.get(small), t0 + 1500ms);  // used, so not stale, but now mature
    CHECK(cache.maybe_create(t0 + 1600ms, false, false, parts(1)) == 0);  // the newcomer is worth less
    const int32_t big = cache.maybe_create(t0 + 1600ms, false, false, parts(10));
    CHECK(big > 0);
    CHECK(cache.get(small) == nullptr);
    CHECK(cache.evictions() == 1);
  }
  SECTION("a consumer never evicts a young follower session") {
    FetchSessionCache cache(1, 1000ms);
    cache.maybe_create(t0, true, false, parts(1));
    CHECK(cache.maybe_create(t0 + 10ms, false, false, parts(100)) == 0);
  }
}

TEST_CASE("touching a session recounts its partitions", "[broker][fetch-session]") {
  FetchSessionCache cache(4);
  const auto t0 = Clock::now();
  const int32_t id = cache.maybe_create(t0, false, false, parts(3));
  FetchSession& s = *cache.get(id);
  std::vector<FetchItem> added = {item("u", 0), item("u", 1)};
  s.update(added, {});
  cache.touch(s, t0 + 1s);
  CHECK(cache.partitions_cached() == 5);
  cache.remove(id);
  CHECK(cache.partitions_cached() == 0);
  CHECK(cache.size() == 0);
}

}  // namespace
}  // namespace runnel::broker
