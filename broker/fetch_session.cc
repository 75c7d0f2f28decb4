#include "broker/fetch_session.h"

#include <limits>

namespace runnel::broker {

FetchKey FetchKey::of(const FetchItem& item) {
  // With a topic id the name is not part of the identity: a v13+ session
  // partition whose name is unknown is the same partition once it is known.
  if (!item.topic_id.is_zero()) return {item.topic_id, {}, item.partition};
  return {{}, item.topic, item.partition};
}

bool CachedPartition::must_respond(const p::FetchResponse::FetchableTopicResponse::PartitionData& data, bool update) {
  bool respond = data.records.size() > 0;
  if (high_watermark != data.high_watermark) {
    respond = true;
    if (update) high_watermark = data.high_watermark;
  }
  if (local_log_start_offset != data.log_start_offset) {
    respond = true;
    if (update) local_log_start_offset = data.log_start_offset;
  }
  if (data.preferred_read_replica != -1) respond = true;
  if (data.error_code != 0) {
    // Sent every time, and the high watermark forgotten so the partition is
    // sent again once the error clears.
    respond = true;
    if (update) high_watermark = -1;
  }
  if (data.diverging_epoch.epoch != -1 || data.diverging_epoch.end_offset != -1) respond = true;
  return respond;
}

FetchSession::FetchSession(int32_t id, bool privileged, bool uses_topic_ids, Clock::time_point now,
                           std::list<CachedPartition> parts)
    : id_(id),
      privileged_(privileged),
      uses_topic_ids_(uses_topic_ids),
      creation_(now),
      last_used_(now),
      epoch_(next_fetch_epoch(0)),
      partitions_(std::move(parts)) {
  for (auto it = partitions_.begin(); it != partitions_.end();) {
    // A full fetch's partitions are distinct already; a duplicate would
    // make the session answer one partition twice.
    if (index_.try_emplace(FetchKey::of(it->request), it).second) ++it;
    else it = partitions_.erase(it);
  }
}

CachedPartition* FetchSession::find(const FetchKey& key) {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &*it->second;
}

void FetchSession::update(std::span<const FetchItem> items, std::span<const FetchKey> forgotten) {
  for (const auto& item : items) {
    const FetchKey key = FetchKey::of(item);
    if (auto it = index_.find(key); it != index_.end()) {
      FetchItem& cached = it->second->request;
      // The name stays as the session knew it when the request names the
      // topic by id only.
      std::string topic = item.topic.empty() ? cached.topic : item.topic;
      cached = item;
      cached.topic = std::move(topic);
      continue;
    }
    // Added: nothing sent of it yet, so the first response carries it.
    partitions_.push_back({item, -1, -1});
    index_.emplace(key, std::prev(partitions_.end()));
  }
  for (const auto& key : forgotten) {
    auto it = index_.find(key);
    if (it == index_.end()) continue;
    partitions_.erase(it->second);
    index_.erase(it);
  }
}

void FetchSession::move_to_back(const FetchKey& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return;
  partitions_.splice(partitions_.end(), partitions_, it->second);
}

int32_t next_fetch_epoch(int32_t epoch) {
  if (epoch < 0) return -1;  // after the final epoch, still the final epoch
  if (epoch == std::numeric_limits<int32_t>::max()) return 1;
  return epoch + 1;
}

FetchSessionCache::FetchSessionCache(size_t max_entries, std::chrono::milliseconds eviction_age)
    : max_entries_(max_entries), eviction_age_(eviction_age) {}

FetchSession* FetchSessionCache::get(int32_t id) {
  auto it = sessions_.find(id);
  return it == sessions_.end() ? nullptr : it->second.get();
}

bool FetchSessionCache::remove(int32_t id) {
  FetchSession* session = get(id);
  if (!session) return false;
  remove(*session);
  return true;
}

void FetchSessionCache::remove(FetchSession& session) {
  last_used_.erase({session.last_used_, session.id_});
  const EvictableKey key{session.privileged_, session.cached_size_, session.id_};
  evictable_by_all_.erase(key);
  evictable_by_privileged_.erase(key);
  partitions_cached_ -= static_cast<int64_t>(session.cached_size_);
  sessions_.erase(session.id_);
}

int32_t FetchSessionCache::new_session_id() {
  std::uniform_int_distribution<int32_t> ids(1, std::numeric_limits<int32_t>::max() - 1);
  for (;;) {
    const int32_t id = ids(random_);
    if (!sessions_.contains(id)) return id;
  }
}

int32_t FetchSessionCache::maybe_create(Clock::time_point now, bool privileged, bool uses_topic_ids,
                                        std::list<CachedPartition> parts) {
  if (sessions_.size() >= max_entries_ && !try_evict(privileged, parts.size(), now)) return 0;
  const int32_t id = new_session_id();
  auto session = std::make_unique<FetchSession>(id, privileged, uses_topic_ids, now, std::move(parts));
  FetchSession& s = *session;
  sessions_.emplace(id, std::move(session));
  last_used_.insert({s.last_used_, id});
  s.cached_size_ = s.size();
  partitions_cached_ += static_cast<int64_t>(s.cached_size_);
  // Just made: evictable by a follower's session only if a consumer's.
  if (!privileged) evictable_by_privileged_.insert({privileged, s.cached_size_, id});
  return id;
}

void FetchSessionCache::touch(FetchSession& session, Clock::time_point now) {
  last_used_.erase({session.last_used_, session.id_});
  session.last_used_ = now;
  last_used_.insert({now, session.id_});
  const EvictableKey old_key{session.privileged_, session.cached_size_, session.id_};
  evictable_by_all_.erase(old_key);
  evictable_by_privileged_.erase(old_key);
  partitions_cached_ += static_cast<int64_t>(session.size()) - static_cast<int64_t>(session.cached_size_);
  session.cached_size_ = session.size();
  const EvictableKey key{session.privileged_, session.cached_size_, session.id_};
  const bool mature = now - session.creation_ > eviction_age_;
  if (!session.privileged_ || mature) evictable_by_privileged_.insert(key);
  if (mature) evictable_by_all_.insert(key);
}

bool FetchSessionCache::try_evict(bool privileged, size_t size, Clock::time_point now) {
  if (last_used_.empty()) return false;
  // A stale session goes first, whoever asks.
  const auto [oldest_use, oldest_id] = *last_used_.begin();
  if (now - oldest_use > eviction_age_) {
    remove(oldest_id);
    ++evictions_;
    return true;
  }
  // Else the least valuable evictable one, if not worth more than the new one.
  const auto& evictable = privileged ? evictable_by_privileged_ : evictable_by_all_;
  if (evictable.empty()) return false;
  const EvictableKey cheapest = *evictable.begin();
  if (EvictableKey{privileged, size, 0} < cheapest) return false;
  remove(std::get<2>(cheapest));
  ++evictions_;
  return true;
}

}  // namespace runnel::broker
