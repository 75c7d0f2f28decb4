// Kafka's incremental fetch sessions (KIP-227; FetchSession.scala).
//
// A fetcher that sends SessionEpoch 0 asks for a session: the broker keeps
// the partitions of that full fetch, with their request parameters and what
// the response told of each (high watermark, log start offset), and hands
// out a session id. Later fetches name the id and the next epoch and list
// only partitions whose parameters changed (plus ForgottenTopicsData); the
// broker fetches every partition of the session and answers only those
// with records, an error, or a high watermark or log start offset the
// fetcher has not yet been told. A 5,000-partition consumer then sends and
// receives a few partitions' worth of bytes per fetch, not 5,000.
//
//   SessionEpoch -1 (FINAL)   a full fetch; a named session is closed and
//                             no new one is made (clients without sessions
//                             send id 0, epoch -1).
//   SessionEpoch 0 (INITIAL)  a full fetch; a named session is closed, and
//                             a new one made when the cache has room.
//   SessionEpoch > 0          incremental: FETCH_SESSION_ID_NOT_FOUND for an
//                             id not in the cache, INVALID_FETCH_SESSION_EPOCH
//                             for an epoch other than the session's,
//                             FETCH_SESSION_TOPIC_ID_ERROR when the session
//                             named topics by id (v13+) and this request
//                             cannot, or the other way round.
//
// The cache holds max.incremental.fetch.session.cache.slots sessions. When
// it is full a new session may evict, as Kafka's tryEvict: the least
// recently used session if unused for more than two minutes; else the
// cheapest evictable one (fewest partitions) if the new one is worth at
// least as much: followers' sessions are privileged, consumers' are not, and
// a session is evictable by a consumer's only once two minutes old. Kafka
// shards the cache (KAFKA-9401) to spread its locks over threads; one event
// loop serves Runnel's fetches, so one cache.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "protocol/messages/01_fetch.h"

namespace runnel::broker {

namespace p = ::runnel::protocol;

// One partition of a fetch as the fetcher asks for it: the request's
// FetchPartition, with the topic it sits under.
struct FetchItem {
  p::Uuid topic_id;   // zero before v13
  std::string topic;  // "" in a v13+ request
  int32_t partition = 0;
  int64_t fetch_offset = 0;
  int32_t max_bytes = 0;
  int32_t current_leader_epoch = -1;
  int32_t last_fetched_epoch = -1;
  int64_t log_start_offset = -1;  // the fetcher's (a follower's)
};

// Kafka's CachedPartition equality: by topic id when there is one, else by
// name, and the partition.
struct FetchKey {
  p::Uuid topic_id;
  std::string topic;
  int32_t partition = 0;
  static FetchKey of(const FetchItem& item);
  auto operator<=>(const FetchKey&) const = default;
};

// A session's partition: what to fetch, and what the fetcher was last told.
struct CachedPartition {
  FetchItem request;
  int64_t high_watermark = -1;
  int64_t local_log_start_offset = -1;

  // Kafka's maybeUpdateResponseData: whether an incremental response must
  // carry the partition (records, an error, a high watermark or log start
  // offset not yet sent, a preferred read replica, a diverging epoch),
  // remembering what it carries when `update`.
  bool must_respond(const p::FetchResponse::FetchableTopicResponse::PartitionData& data, bool update);
};

// Kafka's FetchMetadata.nextEpoch.
int32_t next_fetch_epoch(int32_t epoch);

class FetchSession {
 public:
  using Clock = std::chrono::steady_clock;

  FetchSession(int32_t id, bool privileged, bool uses_topic_ids, Clock::time_point now, std::list<CachedPartition> parts);

  int32_t id() const { return id_; }
  bool privileged() const { return privileged_; }
  bool uses_topic_ids() const { return uses_topic_ids_; }
  int32_t epoch() const { return epoch_; }
  size_t size() const { return partitions_.size(); }
  bool empty() const { return partitions_.empty(); }

  // The partitions in fetch order.
  std::list<CachedPartition>& partitions() { return partitions_; }
  CachedPartition* find(const FetchKey& key);
  // Kafka's FetchSession.update: the request's partitions are added or
  // their parameters replaced; the forgotten ones leave.
  void update(std::span<const FetchItem> items, std::span<const FetchKey> forgotten);
  // A partition whose records were just sent goes to the back, so the
  // response size limits rotate over the session's partitions.
  void move_to_back(const FetchKey& key);
  // The epoch the fetcher's next request must carry.
  void advance_epoch() { epoch_ = next_fetch_epoch(epoch_); }

 private:
  friend class FetchSessionCache;
  int32_t id_;
  bool privileged_;
  bool uses_topic_ids_;
  Clock::time_point creation_;
  Clock::time_point last_used_;
  int32_t epoch_;
  size_t cached_size_ = 0;  // the size the cache last counted
  std::list<CachedPartition> partitions_;
  std::map<FetchKey, std::list<CachedPartition>::iterator> index_;
};

class FetchSessionCache {
 public:
  using Clock = FetchSession::Clock;
  // Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS.
  static constexpr std::chrono::milliseconds kEvictionAge{120000};

  explicit FetchSessionCache(size_t max_entries, std::chrono::milliseconds eviction_age = kEvictionAge);

  FetchSession* get(int32_t id);
  bool remove(int32_t id);
  // A new session of these partitions when there is room, or room made by
  // an eviction; its id, else 0 (the fetcher goes on with full fetches).
  int32_t maybe_create(Clock::time_point now, bool privileged, bool uses_topic_ids, std::list<CachedPartition> parts);
  // Marks the session used now (after its partitions changed).
  void touch(FetchSession& session, Clock::time_point now);

  // Kafka's FetchSessionCache gauges and eviction meter.
  size_t size() const { return sessions_.size(); }
  int64_t partitions_cached() const { return partitions_cached_; }
  uint64_t evictions() const { return evictions_; }

 private:
  // Kafka's EvictableKey: consumers' sessions before followers', then the
  // fewest partitions, then the id.
  using EvictableKey = std::tuple<bool, size_t, int32_t>;
  using LastUsedKey = std::pair<Clock::time_point, int32_t>;
  bool try_evict(bool privileged, size_t size, Clock::time_point now);
  void remove(FetchSession& session);
  int32_t new_session_id();

  size_t max_entries_;
  std::chrono::milliseconds eviction_age_;
  std::unordered_map<int32_t, std::unique_ptr<FetchSession>> sessions_;
  std::set<LastUsedKey> last_used_;
  std::set<EvictableKey> evictable_by_all_;
  std::set<EvictableKey> evictable_by_privileged_;
  int64_t partitions_cached_ = 0;
  uint64_t evictions_ = 0;
  std::mt19937 random_{std::random_device{}()};
};

}  // namespace runnel::broker
