#include "replication/replica_fetcher.h"

#include <algorithm>
#include <vector>

#include "broker/logging.h"
#include "protocol/error_codes.h"
#include "protocol/messages/01_fetch.h"
#include "protocol/messages/02_list_offsets.h"
#include "replication/broker_sender.h"
#include "storage/partition_metadata.h"

namespace runnel::replication {

namespace {

using namespace asio::experimental::awaitable_operators;
namespace p = protocol;
using Clock = std::chrono::steady_clock;
using PartitionKey = std::pair<std::string, int32_t>;

// v12 is the first with LastFetchedEpoch and DivergingEpoch and the last
// that names topics; v15 names them by id and carries the broker epoch in
// ReplicaState (KIP-903). Both are in our codec's and server's range.
constexpr int16_t kFetchVersionByName = 12;
constexpr int16_t kFetchVersionById = 15;
constexpr int16_t kListOffsetsVersion = 7;  // CurrentLeaderEpoch (v4+), flexible
constexpr int64_t kLatestTimestamp = -1;
constexpr int64_t kEarliestTimestamp = -2;

enum class Status : uint8_t {
  fetching,
  delayed,  // retried at `delayed_until`
  failed,   // fenced in its epoch: waits for the metadata to add it again
};

struct FetchState {
  std::shared_ptr<Partition> partition;
  LeaderEpoch epoch;
  p::Uuid topic_id;  // zero when the log does not know it
  Status status = Status::fetching;
  Clock::time_point delayed_until{};
  bool unsynced = false;  // appended since the last fsync (fsync_before_ack)
};

// What a request asked of one partition, to tell a stale answer.
struct Sent {
  LeaderEpoch epoch;
  Offset fetch_offset;
};

}  // namespace

struct ReplicaFetcherManager::Fetcher : std::enable_shared_from_this<Fetcher> {
  Fetcher(asio::any_io_executor executor, NodeId leader_id, int32_t fetcher_index,
          std::shared_ptr<const FetcherOptions> opts, ResolveBroker resolver, std::function<int64_t()> epoch_of_self,
          RunBlocking blocking)
      : ex(std::move(executor)),
        leader(leader_id),
        index(fetcher_index),
        options(std::move(opts)),
        resolve(std::move(resolver)),
        broker_epoch(std::move(epoch_of_self)),
        run_blocking(std::move(blocking)),
        wake(ex),
        stop(ex, Clock::time_point::max()) {}

  asio::any_io_executor ex;
  NodeId leader;
  int32_t index;
  std::shared_ptr<const FetcherOptions> options;
  ResolveBroker resolve;
  std::function<int64_t()> broker_epoch;
  RunBlocking run_blocking;
  std::map<PartitionKey, FetchState> partitions;
  std::unique_ptr<BrokerSender> sender;
  asio::steady_timer wake;  // idle and backoff waits; an added partition or a stop cuts them short
  asio::steady_timer stop;  // never expires: cancelled by a stop, it ends the request in flight
  bool stopped = false;

  void halt() {
    stopped = true;
    wake.cancel();
    stop.cancel();
  }

  std::string name() const {
    return "replica fetcher " + std::to_string(index) + " to broker " + std::to_string(leader.value());
  }

  // replica.socket.timeout.ms bounds each exchange, the leader's long
  // poll included; Kafka refuses a timeout below replica.fetch.wait.max.ms
  // at startup, and here such a setting gets the wait plus a second.
  std::chrono::milliseconds request_timeout() const {
    return std::max(options->socket_timeout, options->max_wait + std::chrono::milliseconds(1000));
  }

  void delay(FetchState& st) {
    st.status = Status::delayed;
    st.delayed_until = Clock::now() + options->backoff;
  }

  FetchState* find(const PartitionKey& key, LeaderEpoch epoch) {
    auto it = partitions.find(key);
    if (it == partitions.end() || it->second.epoch != epoch || it->second.status == Status::failed) return nullptr;
    return &it->second;
  }

  awaitable<void> run();
  awaitable<void> sync_appended();
  awaitable<std::optional<int64_t>> list_offset(const PartitionKey& key, LeaderEpoch epoch, int64_t timestamp);
  awaitable<void> handle_partition(const PartitionKey& key, const Sent& sent,
                                   const p::FetchResponse::FetchableTopicResponse::PartitionData& data);
  awaitable<void> handle_out_of_range(const PartitionKey& key, LeaderEpoch epoch);
  void truncate_on_diverging(FetchState& st, const PartitionKey& key,
                             const p::FetchResponse::FetchableTopicResponse::PartitionData::EpochEndOffset& d);
};

awaitable<void> ReplicaFetcherManager::Fetcher::run() {
  auto self = shared_from_this();  // the coroutine keeps its fetcher after the manager drops it
  while (!stopped) {
    if (options->fsync_before_ack) {
      co_await sync_appended();
      if (stopped) break;
    }
    // The partitions ready to fetch, and the next time one will be.
    const auto now = Clock::now();
    auto next_ready = Clock::time_point::max();
    std::vector<PartitionKey> ready;
    bool by_id = true;
    for (auto& [key, st] : partitions) {
      if (st.status == Status::delayed && st.delayed_until <= now) st.status = Status::fetching;
      if (st.status == Status::delayed) next_ready = std::min(next_ready, st.delayed_until);
      if (st.status != Status::fetching || st.partition->is_leader()) continue;
      ready.push_back(key);
      by_id = by_id && !st.topic_id.is_zero();
    }
    if (ready.empty()) {
      wake.expires_at(next_ready);
      co_await wake.async_wait(broker::as_tuple_awaitable);
      continue;
    }

    auto endpoint = resolve ? resolve(leader) : std::nullopt;
    if (!endpoint) {
      RLOG_WARN("%s: the leader's endpoint is unknown; backing off", name().c_str());
      for (const auto& key : ready) delay(partitions.at(key));
      continue;
    }
    if (!sender || sender->host() != endpoint->first || sender->port() != endpoint->second)
      sender = std::make_unique<BrokerSender>(ex, endpoint->first, endpoint->second,
                                              "broker-" + std::to_string(options->self.value()) + "-fetcher-" +
                                                  std::to_string(index),
                                              request_timeout(), options->tls, options->verify_host, options->sasl);

    // Kafka's buildFetch: a full fetch (no session), every partition at
    // its log end offset with the epoch of its last batch.
    const int16_t version = by_id ? kFetchVersionById : kFetchVersionByName;
    p::FetchRequest req;
    if (version >= 15) {
      req.replica_state.replica_id = options->self.value();
      req.replica_state.replica_epoch = broker_epoch ? broker_epoch() : -1;
    } else {
      req.replica_id = options->self.value();
    }
    req.max_wait_ms = static_cast<int32_t>(options->max_wait.count());
    req.min_bytes = options->min_bytes;
    req.max_bytes = options->response_max_bytes;
    req.isolation_level = 0;
    req.session_id = 0;
    req.session_epoch = -1;
    std::map<PartitionKey, Sent> sent;
    for (const auto& key : ready) {
      const FetchState& st = partitions.at(key);
      if (req.topics.empty() || req.topics.back().topic != key.first) {
        auto& t = req.topics.emplace_back();
        t.topic = key.first;
        t.topic_id = st.topic_id;
      }
      auto& fp = req.topics.back().partitions.emplace_back();
      fp.partition = key.second;
      fp.current_leader_epoch = st.epoch.value();
      fp.fetch_offset = st.partition->log_end_offset().value();
      fp.last_fetched_epoch = st.partition->log().latest_epoch().value_or(-1);
      fp.log_start_offset = st.partition->log_start_offset().value();
      fp.partition_max_bytes = options->max_bytes;
      sent[key] = {st.epoch, Offset(fp.fetch_offset)};
    }

    auto outcome =
        co_await (sender->send<p::FetchApi>(req, version) || stop.async_wait(broker::as_tuple_awaitable));
    if (stopped || outcome.index() == 1) break;
    auto& response = std::get<0>(outcome);
    if (!response || response->error_code != p::code(p::ErrorCode::none)) {
      if (!response)
        RLOG_WARN("%s: fetch failed: %s; backing off", name().c_str(), response.error().message().c_str());
      else
        RLOG_WARN("%s: fetch answered error %d; backing off", name().c_str(), response->error_code);
      for (const auto& [key, s] : sent)
        if (FetchState* st = find(key, s.epoch)) delay(*st);
      continue;
    }

    // Topic ids back to names (v13+ answers by id).
    std::map<p::Uuid, std::string> names;
    if (version >= 13)
      for (const auto& t : req.topics) names[t.topic_id] = t.topic;
    for (const auto& tr : response->responses) {
      std::string topic = tr.topic;
      if (version >= 13) {
        auto it = names.find(tr.topic_id);
        if (it == names.end()) continue;
        topic = it->second;
      }
      for (const auto& pd : tr.partitions) {
        PartitionKey key{topic, pd.partition_index};
        auto s = sent.find(key);
        if (s == sent.end()) continue;
        co_await handle_partition(key, s->second, pd);
        if (stopped) break;
      }
      if (stopped) break;
    }
  }
  if (sender) sender->close();
}

awaitable<void> ReplicaFetcherManager::Fetcher::handle_partition(
    const PartitionKey& key, const Sent& sent, const p::FetchResponse::FetchableTopicResponse::PartitionData& data) {
  FetchState* st = find(key, sent.epoch);
  // Removed, re-added at another epoch, or moved since the request left.
  if (!st || st->partition->is_leader() || st->partition->log_end_offset() != sent.fetch_offset) co_return;
  Partition& partition = *st->partition;
  const auto error = static_cast<p::ErrorCode>(data.error_code);
  switch (error) {
    case p::ErrorCode::none: {
      if (data.diverging_epoch.epoch >= 0 || data.diverging_epoch.end_offset >= 0) {
        truncate_on_diverging(*st, key, data.diverging_epoch);
        co_return;
      }
      if (!data.records.is_null() && data.records.size() > 0) {
        auto appended = partition.append_records_as_follower(data.records.bytes());
        if (!appended) {
          RLOG_WARN("%s: %s-%d: append of the leader's records failed: %s", name().c_str(), key.first.c_str(),
                    key.second, appended.error().message().c_str());
          delay(*st);
          co_return;
        }
        if (appended->batches > 0) st->unsynced = true;
      }
      // Kafka's processPartitionData: the leader's high watermark and log
      // start offset, bounded by what this log holds.
      partition.update_follower_high_watermark(Offset(data.high_watermark));
      if (data.log_start_offset >= 0)
        if (auto ec = partition.maybe_increment_log_start_offset(Offset(data.log_start_offset)))
          RLOG_WARN("%s: %s-%d: adopting the leader's log start offset %lld: %s", name().c_str(), key.first.c_str(),
                    key.second, static_cast<long long>(data.log_start_offset), ec.message().c_str());
      co_return;
    }
    case p::ErrorCode::offset_out_of_range:
      co_await handle_out_of_range(key, sent.epoch);
      co_return;
    case p::ErrorCode::fenced_leader_epoch:
      // Kafka's onPartitionFenced: asked in the epoch it still has, the
      // partition is behind the leader; it waits for the metadata.
      RLOG_INFO("%s: %s-%d: epoch %d is older than the leader's; awaiting new metadata", name().c_str(),
                key.first.c_str(), key.second, sent.epoch.value());
      st->status = Status::failed;
      co_return;
    default:
      // NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH (the leader is behind
      // the metadata), UNKNOWN_TOPIC_OR_PARTITION, a storage error: retried.
      RLOG_DEBUG("%s: %s-%d: the leader answered error %d; backing off", name().c_str(), key.first.c_str(),
                 key.second, data.error_code);
      delay(*st);
      co_return;
  }
}

void ReplicaFetcherManager::Fetcher::truncate_on_diverging(
    FetchState& st, const PartitionKey& key,
    const p::FetchResponse::FetchableTopicResponse::PartitionData::EpochEndOffset& d) {
  // Kafka's getOffsetTruncationState, with truncation on fetch: the
  // follower's own end of the leader's epoch bounds the truncation, and a
  // follower that does not know that epoch goes to the end of its largest
  // epoch below it; the next fetch's divergence check goes on from there.
  Partition& partition = *st.partition;
  const int64_t own_end = partition.log_end_offset().value();
  int64_t target = own_end;
  if (d.end_offset < 0) {
    target = own_end;  // the leader knows no end: nothing to truncate
  } else if (d.epoch < 0) {
    target = std::min(d.end_offset, own_end);
  } else {
    auto [epoch, end] = partition.log().end_offset_for_epoch(d.epoch);
    if (epoch < 0 || end < 0) target = std::min(d.end_offset, own_end);
    else if (epoch != d.epoch) target = std::min(end, own_end);
    else target = std::min({end, d.end_offset, own_end});
  }
  RLOG_INFO("%s: %s-%d: diverging at epoch %d (leader's end offset %lld): truncating to %lld", name().c_str(),
            key.first.c_str(), key.second, d.epoch, static_cast<long long>(d.end_offset),
            static_cast<long long>(target));
  if (auto ec = partition.truncate_to(Offset(target))) {
    RLOG_WARN("%s: %s-%d: truncation to %lld failed: %s", name().c_str(), key.first.c_str(), key.second,
              static_cast<long long>(target), ec.message().c_str());
    delay(st);
  }
}

awaitable<void> ReplicaFetcherManager::Fetcher::handle_out_of_range(const PartitionKey& key, LeaderEpoch epoch) {
  // Kafka's fetchOffsetAndTruncate.
  auto leader_end = co_await list_offset(key, epoch, kLatestTimestamp);
  FetchState* st = find(key, epoch);
  if (!st) co_return;
  if (!leader_end) {
    delay(*st);
    co_return;
  }
  const int64_t own_end = st->partition->log_end_offset().value();
  if (*leader_end < own_end) {
    // An unclean election left the leader behind us: truncate to it.
    RLOG_WARN("%s: %s-%d: out of range; the leader's log end %lld is below ours (%lld): truncating", name().c_str(),
              key.first.c_str(), key.second, static_cast<long long>(*leader_end), static_cast<long long>(own_end));
    if (auto ec = st->partition->truncate_to(Offset(*leader_end))) {
      RLOG_WARN("%s: %s-%d: truncation failed: %s", name().c_str(), key.first.c_str(), key.second,
                ec.message().c_str());
      delay(*st);
    }
    co_return;
  }
  auto leader_start = co_await list_offset(key, epoch, kEarliestTimestamp);
  st = find(key, epoch);
  if (!st) co_return;
  if (!leader_start) {
    delay(*st);
    co_return;
  }
  if (*leader_start > st->partition->log_end_offset().value()) {
    // Too far behind: the leader deleted what follows our end.
    RLOG_WARN("%s: %s-%d: out of range; the leader's log starts at %lld, past our end %lld: starting over there",
              name().c_str(), key.first.c_str(), key.second, static_cast<long long>(*leader_start),
              static_cast<long long>(st->partition->log_end_offset().value()));
    if (auto ec = st->partition->truncate_fully_and_start_at(Offset(*leader_start))) {
      RLOG_WARN("%s: %s-%d: truncation failed: %s", name().c_str(), key.first.c_str(), key.second,
                ec.message().c_str());
      delay(*st);
    }
    co_return;
  }
  // Between the leader's start and end after all (it moved): fetch again, later.
  delay(*st);
}

awaitable<std::optional<int64_t>> ReplicaFetcherManager::Fetcher::list_offset(const PartitionKey& key,
                                                                               LeaderEpoch epoch, int64_t timestamp) {
  p::ListOffsetsRequest req;
  req.replica_id = options->self.value();
  req.isolation_level = 0;
  auto& t = req.topics.emplace_back();
  t.name = key.first;
  auto& lp = t.partitions.emplace_back();
  lp.partition_index = key.second;
  lp.current_leader_epoch = epoch.value();
  lp.timestamp = timestamp;
  auto outcome = co_await (sender->send<p::ListOffsetsApi>(req, kListOffsetsVersion) ||
                           stop.async_wait(broker::as_tuple_awaitable));
  if (stopped || outcome.index() == 1) co_return std::nullopt;
  auto& response = std::get<0>(outcome);
  if (!response) {
    RLOG_WARN("%s: ListOffsets failed: %s", name().c_str(), response.error().message().c_str());
    co_return std::nullopt;
  }
  for (const auto& tr : response->topics)
    for (const auto& pr : tr.partitions)
      if (tr.name == key.first && pr.partition_index == key.second) {
        if (pr.error_code != p::code(p::ErrorCode::none) || pr.offset < 0) co_return std::nullopt;
        co_return pr.offset;
      }
  co_return std::nullopt;
}

awaitable<void> ReplicaFetcherManager::Fetcher::sync_appended() {
  // Copies: the map may change while a sync runs.
  std::vector<std::pair<PartitionKey, std::shared_ptr<Partition>>> pending;
  for (auto& [key, st] : partitions)
    if (st.unsynced) {
      st.unsynced = false;
      pending.emplace_back(key, st.partition);
    }
  for (const auto& [key, partition] : pending) {
    // A named call, not a temporary in the co_await: GCC 12 destroys such
    // temporaries twice.
    std::function<std::error_code()> sync = [log = partition->log_ptr()] { return log->sync(); };
    std::error_code ec = co_await run_blocking(std::move(sync));
    if (ec) {
      RLOG_ERROR("%s: %s-%d: fsync failed: %s", name().c_str(), key.first.c_str(), key.second, ec.message().c_str());
      if (auto it = partitions.find(key); it != partitions.end() && it->second.partition == partition)
        delay(it->second);
    }
    if (stopped) co_return;
  }
}

ReplicaFetcherManager::ReplicaFetcherManager(asio::any_io_executor ex, FetcherOptions options, ResolveBroker resolve,
                                             std::function<int64_t()> broker_epoch, RunBlocking run_blocking)
    : ex_(std::move(ex)),
      options_(std::make_shared<const FetcherOptions>(std::move(options))),
      resolve_(std::move(resolve)),
      broker_epoch_(std::move(broker_epoch)),
      run_blocking_(std::move(run_blocking)) {
  if (!run_blocking_)
    run_blocking_ = [](std::function<std::error_code()> fn) -> awaitable<std::error_code> { co_return fn(); };
}

ReplicaFetcherManager::~ReplicaFetcherManager() { shutdown(); }

int32_t ReplicaFetcherManager::fetcher_index(const std::string& topic, PartitionId id) const {
  // Kafka's getFetcherId: Utils.abs(31 * topic.hashCode + partition) % numFetchers.
  int32_t h = 0;
  for (unsigned char c : topic) h = static_cast<int32_t>(31u * static_cast<uint32_t>(h) + c);
  const int32_t n = std::max(1, options_->num_fetchers);
  const int32_t mixed = static_cast<int32_t>(31u * static_cast<uint32_t>(h) + static_cast<uint32_t>(id.value()));
  return static_cast<int32_t>((static_cast<uint32_t>(mixed) & 0x7fffffff) % static_cast<uint32_t>(n));
}

void ReplicaFetcherManager::add_partition(std::shared_ptr<Partition> partition, NodeId leader,
                                          LeaderEpoch leader_epoch) {
  if (stopped_ || !partition) return;
  const FetcherKey fkey{leader, fetcher_index(partition->topic(), partition->id())};
  const PartitionKey key{partition->topic(), partition->index()};
  // Kafka's addFetcherForPartitions: the same leader and epoch keeps its
  // state, unless it was fenced (Kafka has dropped a failed partition, so
  // adding it again starts it over).
  if (auto it = fetchers_.find(fkey); it != fetchers_.end())
    if (auto st = it->second->partitions.find(key);
        st != it->second->partitions.end() && st->second.partition == partition &&
        st->second.epoch == leader_epoch && st->second.status != Status::failed)
      return;
  remove_partition(partition->topic(), partition->id());
  auto& fetcher = fetchers_[fkey];
  if (!fetcher) {
    fetcher = std::make_shared<Fetcher>(ex_, leader, fkey.second, options_, resolve_, broker_epoch_, run_blocking_);
    asio::co_spawn(ex_, fetcher->run(), [name = fetcher->name()](std::exception_ptr e) {
      if (!e) return;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        RLOG_ERROR("%s stopped: %s", name.c_str(), ex.what());
      }
    });
  }
  FetchState st;
  st.partition = std::move(partition);
  st.epoch = leader_epoch;
  // The topic id names the topic in Fetch v13+; a log without
  // partition.metadata is fetched by name (v12).
  if (auto id = storage::read_partition_metadata(st.partition->log().dir())) st.topic_id = *id;
  fetcher->partitions[key] = std::move(st);
  fetcher->wake.cancel();
}

void ReplicaFetcherManager::remove_partition(const std::string& topic, PartitionId id) {
  const PartitionKey key{topic, id.value()};
  for (auto it = fetchers_.begin(); it != fetchers_.end();) {
    auto& fetcher = *it->second;
    fetcher.partitions.erase(key);
    if (fetcher.partitions.empty()) {
      // Kafka's shutdownIdleFetcherThreads.
      fetcher.halt();
      it = fetchers_.erase(it);
    } else {
      ++it;
    }
  }
}

void ReplicaFetcherManager::shutdown() {
  stopped_ = true;
  for (auto& [key, fetcher] : fetchers_) fetcher->halt();
  fetchers_.clear();
}

size_t ReplicaFetcherManager::partition_count() const {
  size_t n = 0;
  for (const auto& [key, fetcher] : fetchers_) n += fetcher->partitions.size();
  return n;
}

}  // namespace runnel::replication
