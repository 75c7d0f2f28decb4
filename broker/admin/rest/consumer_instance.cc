#include "broker/admin/rest/consumer_instance.h"

#include <algorithm>

#include <boost/json/monotonic_resource.hpp>
#include <boost/json/parse.hpp>
#include <re2/re2.h>

#include "broker/admin/rest/broker_calls.h"
#include "broker/admin/rest/consumer_fetch.h"
#include "broker/logging.h"

namespace runnel::broker::admin::rest {

namespace {

using protocol::ErrorCode;
using Clock = std::chrono::steady_clock;

constexpr int16_t kListOffsetsVersion = 7;
constexpr int16_t kMetadataVersion = 12;
// How often a subscription looks for topics it newly covers and partitions
// added to them (the Java consumer asks every metadata.max.age.ms, 5
// minutes, and its leader rejoins on a change; a REST client polls rarely,
// so Runnel looks at most this often, on poll).
constexpr auto kMetadataRecheck = std::chrono::seconds(5);
// A pattern longer than this is refused (REST Proxy's are a topic name or a
// few wildcards; RE2 bounds the rest).
constexpr size_t kMaxPattern = 4096;
// A poll with nothing to fetch waits this long before it looks again.
constexpr auto kIdleRound = std::chrono::milliseconds(100);

bool is_json(const std::optional<std::string>& bytes) {
  if (!bytes) return true;
  boost::system::error_code ec;
  boost::json::monotonic_resource arena;
  (void)boost::json::parse(*bytes, ec, &arena);
  return !ec;
}

bool needs_rejoin(ErrorCode e) {
  return e == ErrorCode::rebalance_in_progress || e == ErrorCode::unknown_member_id ||
         e == ErrorCode::illegal_generation || e == ErrorCode::fenced_instance_id;
}

RestError illegal_state(std::string_view why) { return {40903, "Illegal state: " + std::string(why)}; }

RestError kafka_error(ErrorCode e, std::string_view what) {
  return {retriable(e) ? 50003 : 50002, "Kafka error: " + std::string(what) + ": " + std::string(protocol::error_name(e))};
}

}  // namespace

ConsumerInstance::ConsumerInstance(Broker& broker, RestClient client, std::string group, std::string name,
                                   ConsumerInstanceConfig config)
    : broker_(broker),
      client_(client),
      name_(std::move(name)),
      config_(config),
      member_(broker, std::move(client), std::move(group)),
      last_commit_(Clock::now()),
      last_used_(Clock::now()),
      turn_(broker.io(), Clock::time_point::max()),
      joined_(broker.io()),
      beat_(broker.io()) {}

ConsumerInstance::~ConsumerInstance() = default;

awaitable<void> ConsumerInstance::lock() {
  // turn_ never expires: unlock() cancels it to wake every waiter, and
  // all but one wait again.
  while (busy_) co_await turn_.async_wait(as_tuple_awaitable);
  busy_ = true;
  touch();
}

void ConsumerInstance::unlock() {
  busy_ = false;
  touch();
  turn_.cancel();
}

std::vector<std::string> ConsumerInstance::subscription() const {
  if (mode_ == Mode::topics) return topics_;
  if (mode_ == Mode::pattern) return joined_topics_;
  return {};
}

awaitable<std::optional<RestError>> ConsumerInstance::subscribe(std::vector<std::string> topics) {
  if (mode_ == Mode::assigned) co_return illegal_state("Subscription to topics, partitions and pattern are mutually exclusive");
  std::sort(topics.begin(), topics.end());
  topics.erase(std::unique(topics.begin(), topics.end()), topics.end());
  if (topics.empty()) {
    co_await unsubscribe();
    co_return std::nullopt;
  }
  if (mode_ != Mode::topics || topics != topics_) ++subscription_epoch_;
  mode_ = Mode::topics;
  topics_ = std::move(topics);
  if (topics_ != joined_topics_ || !member_.is_member()) needs_join_ = true;
  co_return std::nullopt;
}

awaitable<std::optional<RestError>> ConsumerInstance::subscribe_pattern(const std::string& pattern) {
  if (mode_ == Mode::assigned) co_return illegal_state("Subscription to topics, partitions and pattern are mutually exclusive");
  if (pattern.size() > kMaxPattern)
    co_return RestError{42204, "Invalid consumer configuration: topic_pattern is longer than " +
                                   std::to_string(kMaxPattern) + " characters"};
  RE2::Options options;
  options.set_log_errors(false);
  auto compiled = std::make_unique<RE2>(pattern, options);
  if (!compiled->ok())
    co_return RestError{42204, "Invalid consumer configuration: topic_pattern: " + compiled->error()};
  pattern_ = std::move(compiled);
  ++subscription_epoch_;
  mode_ = Mode::pattern;
  pattern_text_ = pattern;
  needs_join_ = true;
  co_return std::nullopt;
}

awaitable<void> ConsumerInstance::unsubscribe() {
  ++subscription_epoch_;
  if (mode_ == Mode::topics || mode_ == Mode::pattern) {
    co_await auto_commit_if_due(true);
    co_await member_.leave();
  }
  mode_ = Mode::none;
  topics_.clear();
  joined_topics_.clear();
  pattern_text_.clear();
  needs_join_ = false;
  set_assignment({});
}

awaitable<std::optional<RestError>> ConsumerInstance::assign(std::vector<TopicPartition> partitions) {
  if (mode_ == Mode::topics || mode_ == Mode::pattern)
    co_return illegal_state("Subscription to topics, partitions and pattern are mutually exclusive");
  std::sort(partitions.begin(), partitions.end());
  partitions.erase(std::unique(partitions.begin(), partitions.end()), partitions.end());
  mode_ = partitions.empty() ? Mode::none : Mode::assigned;
  set_assignment(std::move(partitions));
  co_return std::nullopt;
}

void ConsumerInstance::set_assignment(std::vector<TopicPartition> partitions) {
  assignment_ = std::move(partitions);
  std::erase_if(positions_, [&](const auto& kv) {
    return !std::binary_search(assignment_.begin(), assignment_.end(), kv.first);
  });
  std::erase_if(consumed_, [&](const auto& kv) {
    return !std::binary_search(assignment_.begin(), assignment_.end(), kv.first);
  });
}

std::optional<RestError> ConsumerInstance::seek(const std::map<TopicPartition, int64_t>& offsets) {
  for (const auto& [tp, offset] : offsets) {
    if (!std::binary_search(assignment_.begin(), assignment_.end(), tp))
      return illegal_state("No current assignment for partition " + tp.first + "-" + std::to_string(tp.second));
    if (offset < 0) return RestError{42204, "Invalid consumer configuration: seek offset must not be negative"};
  }
  for (const auto& [tp, offset] : offsets) positions_[tp] = offset;
  return std::nullopt;
}

awaitable<std::optional<RestError>> ConsumerInstance::seek_to(const std::vector<TopicPartition>& partitions,
                                                              bool beginning) {
  for (const auto& tp : partitions)
    if (!std::binary_search(assignment_.begin(), assignment_.end(), tp))
      co_return illegal_state("No current assignment for partition " + tp.first + "-" + std::to_string(tp.second));
  co_return co_await reset_positions(partitions, beginning ? -2 : -1);
}

awaitable<std::variant<std::map<TopicPartition, int64_t>, RestError>> ConsumerInstance::list_offsets(
    const std::map<TopicPartition, int64_t>& timestamps) {
  std::map<TopicPartition, int64_t> found;
  if (timestamps.empty()) co_return found;
  const auto request = [](const std::vector<std::pair<TopicPartition, int64_t>>& asks) {
    p::ListOffsetsRequest req;
    req.replica_id = -1;
    req.isolation_level = 0;
    for (const auto& [tp, timestamp] : asks) {
      if (req.topics.empty() || req.topics.back().name != tp.first) req.topics.emplace_back().name = tp.first;
      auto& part = req.topics.back().partitions.emplace_back();
      part.partition_index = tp.second;
      part.timestamp = timestamp;
    }
    return req;
  };
  auto local = co_await call_broker<p::ListOffsetsApi>(broker_, client_, broker_.node_id(),
                                                       request({timestamps.begin(), timestamps.end()}),
                                                       kListOffsetsVersion);
  // In a cluster, what another broker leads is asked there.
  std::map<int32_t, std::vector<std::pair<TopicPartition, int64_t>>> elsewhere;
  const auto take = [&](const p::ListOffsetsResponse& resp, bool forward) -> std::optional<RestError> {
    for (const auto& t : resp.topics)
      for (const auto& part : t.partitions) {
        const TopicPartition tp{t.name, part.partition_index};
        const auto e = static_cast<ErrorCode>(part.error_code);
        if (e == ErrorCode::not_leader_or_follower && forward) {
          if (auto leader = leader_elsewhere(broker_, tp.first, tp.second)) {
            elsewhere[*leader].emplace_back(tp, timestamps.at(tp));
            continue;
          }
        }
        if (e == ErrorCode::topic_authorization_failed) return from_kafka(e, t.name);
        if (e != ErrorCode::none) return kafka_error(e, "ListOffsets for " + t.name);
        found[tp] = part.offset;
      }
    return std::nullopt;
  };
  if (auto e = take(*local, true)) co_return *e;
  for (const auto& [leader, asks] : elsewhere) {
    auto there = co_await call_broker<p::ListOffsetsApi>(broker_, client_, leader, request(asks), kListOffsetsVersion);
    if (!there) co_return kafka_error(ErrorCode::not_leader_or_follower, "ListOffsets");
    if (auto e = take(*there, false)) co_return *e;
  }
  co_return found;
}

awaitable<std::optional<RestError>> ConsumerInstance::reset_positions(const std::vector<TopicPartition>& partitions,
                                                                      int64_t timestamp) {
  std::map<TopicPartition, int64_t> asks;
  for (const auto& tp : partitions) asks[tp] = timestamp;
  auto found = co_await list_offsets(asks);
  if (auto* e = std::get_if<RestError>(&found)) co_return *e;
  for (const auto& [tp, offset] : std::get<0>(found)) positions_[tp] = offset;
  co_return std::nullopt;
}

awaitable<std::optional<RestError>> ConsumerInstance::seek_to_times(const std::map<TopicPartition, int64_t>& timestamps) {
  for (const auto& [tp, ts] : timestamps)
    if (!std::binary_search(assignment_.begin(), assignment_.end(), tp))
      co_return illegal_state("No current assignment for partition " + tp.first + "-" + std::to_string(tp.second));
  auto found = co_await list_offsets(timestamps);
  if (auto* e = std::get_if<RestError>(&found)) co_return *e;
  std::vector<TopicPartition> past_end;
  for (const auto& [tp, offset] : std::get<0>(found)) {
    if (offset >= 0) positions_[tp] = offset;
    else past_end.push_back(tp);  // no record that late
  }
  co_return co_await reset_positions(past_end, -1);
}

awaitable<std::optional<RestError>> ConsumerInstance::fill_positions() {
  std::vector<TopicPartition> missing;
  for (const auto& tp : assignment_)
    if (!positions_.count(tp)) missing.push_back(tp);
  if (missing.empty()) co_return std::nullopt;
  auto committed = co_await member_.committed(missing);
  if (auto* e = std::get_if<ErrorCode>(&committed)) {
    if (*e == ErrorCode::group_authorization_failed) co_return from_kafka(*e, "");
    co_return kafka_error(*e, "OffsetFetch");
  }
  std::vector<TopicPartition> reset;
  for (const auto& tp : missing) {
    const auto& found = std::get<0>(committed);
    auto it = found.find(tp);
    if (it != found.end()) positions_[tp] = it->second.first;
    else reset.push_back(tp);
  }
  if (reset.empty()) co_return std::nullopt;
  if (config_.auto_offset_reset == ConsumerInstanceConfig::Reset::none)
    co_return RestError{50002, "Kafka error: Undefined offset with no reset policy for partitions: " +
                                   reset.front().first + "-" + std::to_string(reset.front().second)};
  co_return co_await reset_positions(
      reset, config_.auto_offset_reset == ConsumerInstanceConfig::Reset::earliest ? -2 : -1);
}

awaitable<std::map<std::string, int32_t>> ConsumerInstance::subscribed_topics() {
  p::MetadataRequest req;
  req.topics.reset();  // a pattern's: null, every topic the client may describe
  if (mode_ == Mode::topics) {
    req.topics = std::vector<p::MetadataRequest::MetadataRequestTopic>();
    for (const auto& t : topics_) req.topics->emplace_back().name = t;
  }
  req.allow_auto_topic_creation = false;
  auto resp = co_await call_broker<p::MetadataApi>(broker_, client_, broker_.node_id(), req, kMetadataVersion);
  std::map<std::string, int32_t> out;
  for (const auto& t : resp->topics) {
    if (t.error_code != 0 || !t.name || t.is_internal) continue;
    // As Java's Pattern.matcher(topic).matches(): the whole name.
    if (mode_ == Mode::pattern && (!pattern_ || !RE2::FullMatch(*t.name, *pattern_))) continue;
    out[*t.name] = static_cast<int32_t>(t.partitions.size());
  }
  co_return out;
}

awaitable<void> ConsumerInstance::run_join() {
  auto self = shared_from_this();  // the join outlives a poll that stopped waiting
  joining_ = true;
  needs_join_ = false;  // before any wait: a subscribe meanwhile sets it again
  join_error_.reset();
  const uint64_t epoch = subscription_epoch_;
  try {
    // The positions handed out so far are committed before the partitions
    // may move (the Java consumer's auto commit on revocation).
    co_await auto_commit_if_due(true);
    std::map<std::string, int32_t> covered = co_await subscribed_topics();
    std::vector<std::string> topics = topics_;
    if (mode_ == Mode::pattern) {
      topics.clear();
      for (const auto& [name, count] : covered) topics.push_back(name);
    }
    auto result = co_await member_.join(topics);
    if (closed_ || (mode_ != Mode::topics && mode_ != Mode::pattern)) {
      // Deleted or unsubscribed while joining (that left the group and
      // ended the join); a join that completed first leaves now.
      if (std::holds_alternative<protocol::Assignment>(result)) co_await member_.leave();
    } else if (epoch != subscription_epoch_) {
      needs_join_ = true;  // subscribed anew meanwhile: the next poll joins with it
    } else if (auto* e = std::get_if<ErrorCode>(&result)) {
      join_error_ = *e == ErrorCode::group_authorization_failed ? from_kafka(*e, "") : kafka_error(*e, "JoinGroup");
      needs_join_ = true;
    } else {
      joined_topics_ = topics;
      joined_counts_ = std::move(covered);
      last_metadata_check_ = Clock::now();
      std::vector<TopicPartition> partitions;
      for (const auto& [topic, parts] : std::get<protocol::Assignment>(result))
        for (int32_t p : parts) partitions.emplace_back(topic, p);
      std::sort(partitions.begin(), partitions.end());
      // The eager protocol revokes every partition: each assigned one
      // starts again from its committed offset.
      positions_.clear();
      consumed_.clear();
      set_assignment(std::move(partitions));
      if (!heartbeating_) {
        heartbeating_ = true;
        asio::co_spawn(broker_.io(), heartbeat_loop(), asio::detached);
      }
    }
  } catch (const std::exception& e) {
    join_error_ = RestError{500, std::string("Internal Server Error: ") + e.what()};
    needs_join_ = true;
  }
  joining_ = false;
  joined_.cancel();
}

awaitable<std::optional<RestError>> ConsumerInstance::ensure_member(Clock::time_point deadline) {
  if (mode_ != Mode::topics && mode_ != Mode::pattern) co_return std::nullopt;
  if (member_.is_member() && !joining_ && !needs_join_ && Clock::now() - last_metadata_check_ >= kMetadataRecheck) {
    last_metadata_check_ = Clock::now();
    const uint64_t epoch = subscription_epoch_;
    const std::map<std::string, int32_t> covered = co_await subscribed_topics();
    if (epoch == subscription_epoch_ && covered != joined_counts_) needs_join_ = true;
  }
  if ((needs_join_ || !member_.is_member()) && !joining_) asio::co_spawn(broker_.io(), run_join(), asio::detached);
  while (joining_ && Clock::now() < deadline) {
    joined_.expires_at(deadline);
    co_await joined_.async_wait(as_tuple_awaitable);
  }
  if (joining_) co_return std::nullopt;  // still joining: the poll answers nothing yet
  if (join_error_) co_return std::exchange(join_error_, std::nullopt);
  co_return std::nullopt;
}

awaitable<void> ConsumerInstance::heartbeat_loop() {
  auto self = shared_from_this();
  const auto interval = member_.timeouts().heartbeat_interval;
  while (!closed_) {
    beat_.expires_after(interval);
    co_await beat_.async_wait(as_tuple_awaitable);
    if (closed_) break;
    if (joining_ || !member_.is_member()) continue;
    const ErrorCode e = co_await member_.heartbeat();
    // The group is rebalancing, or this member is out of it: the next
    // poll joins again, as the Java consumer's does. (A coordinator that
    // moved is found again by the next heartbeat.)
    if (!joining_ && needs_rejoin(e)) needs_join_ = true;
  }
}

awaitable<std::variant<std::vector<ConsumedRestRecord>, RestError>> ConsumerInstance::poll(
    std::chrono::milliseconds timeout, int64_t max_bytes) {
  const auto deadline = Clock::now() + timeout;
  if (mode_ == Mode::none) co_return illegal_state("Consumer is not subscribed to any topics or assigned any partitions");
  if (auto e = co_await ensure_member(deadline)) co_return *e;
  co_await auto_commit_if_due(false);
  std::vector<ConsumedRestRecord> records;
  int64_t bytes = 0;
  // At least one round, even with a timeout of 0.
  for (bool first = true; !closed_ && (first || Clock::now() < deadline); first = false) {
    if (joining_ || needs_join_) break;  // the next poll rejoins
    if (auto e = co_await fill_positions()) co_return *e;
    std::map<TopicPartition, int64_t> fetch;
    for (const auto& tp : assignment_) fetch[tp] = positions_.at(tp);
    if (fetch.empty()) {
      co_await pause_until(std::min<Clock::time_point>(deadline, Clock::now() + kIdleRound));
      continue;
    }
    FetchLimits limits;
    limits.max_wait = std::max(std::chrono::milliseconds(0),
                               std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    limits.max_bytes = max_bytes - bytes;
    limits.first_goes = records.empty();
    FetchRound round = co_await fetch_round(broker_, client_, fetch, limits);
    if (round.error) co_return *round.error;
    // A json-format instance hands out nothing from a record on that is not
    // JSON: its partition stays there (REST Proxy's read fails on it).
    std::optional<RestError> not_json;
    if (config_.format == EmbeddedFormat::json) {
      std::set<TopicPartition> stopped;
      std::vector<ConsumedRestRecord> kept;
      for (auto& r : round.records) {
        const TopicPartition tp{r.topic, r.partition};
        if (stopped.count(tp)) continue;
        if (!is_json(r.key) || !is_json(r.value)) {
          stopped.insert(tp);
          fetch[tp] = r.offset;
          if (!not_json)
            not_json = RestError{50002, "Kafka error: the record at offset " + std::to_string(r.offset) + " of " +
                                            r.topic + "-" + std::to_string(r.partition) + " is not JSON"};
          continue;
        }
        kept.push_back(std::move(r));
      }
      round.records = std::move(kept);
    }
    // Positions move only where the partition is still assigned (a
    // rebalance may have come meanwhile).
    for (const auto& [tp, offset] : fetch)
      if (positions_.count(tp)) positions_[tp] = offset;
    const bool got_any = !round.records.empty();
    for (auto& r : round.records) {
      consumed_[{r.topic, r.partition}] = r.offset + 1;
      bytes += (r.key ? static_cast<int64_t>(r.key->size()) : 0) + (r.value ? static_cast<int64_t>(r.value->size()) : 0);
      records.push_back(std::move(r));
    }
    if (not_json) {
      if (records.empty()) co_return *not_json;
      break;
    }
    if (!round.out_of_range.empty()) {
      if (config_.auto_offset_reset == ConsumerInstanceConfig::Reset::none)
        co_return RestError{50002, "Kafka error: Offsets out of range with no configured reset policy for partitions: " +
                                       round.out_of_range.begin()->first + "-" +
                                       std::to_string(round.out_of_range.begin()->second)};
      std::vector<TopicPartition> reset(round.out_of_range.begin(), round.out_of_range.end());
      if (auto e = co_await reset_positions(
              reset, config_.auto_offset_reset == ConsumerInstanceConfig::Reset::earliest ? -2 : -1))
        co_return *e;
    }
    if (round.full) break;
    if (config_.fetch_min_bytes >= 0 && bytes > config_.fetch_min_bytes) break;
    // An empty round came back before its wait was over (a partition
    // with an error answers at once, and in a cluster the partitions led
    // elsewhere are asked without a wait): pause rather than spin.
    if (!got_any) co_await pause_until(std::min<Clock::time_point>(deadline, Clock::now() + kIdleRound));
  }
  co_return records;
}

awaitable<void> ConsumerInstance::pause_until(Clock::time_point when) {
  joined_.expires_at(when);
  co_await joined_.async_wait(as_tuple_awaitable);
}

awaitable<void> ConsumerInstance::auto_commit_if_due(bool now) {
  if (!config_.auto_commit || consumed_.empty()) co_return;
  if (!now && Clock::now() - last_commit_ < config_.auto_commit_interval) co_return;
  last_commit_ = Clock::now();
  auto offsets = consumed_;
  const ErrorCode e = co_await member_.commit(offsets);
  if (e == ErrorCode::none) {
    for (const auto& [tp, offset] : offsets)
      if (auto it = consumed_.find(tp); it != consumed_.end() && it->second == offset) consumed_.erase(it);
  } else {
    RLOG_INFO("REST consumer %s of group %s: auto commit failed: %s", name_.c_str(), group().c_str(),
              std::string(protocol::error_name(e)).c_str());
    if (needs_rejoin(e) && mode_ != Mode::assigned) needs_join_ = true;
  }
}

awaitable<std::variant<std::map<TopicPartition, int64_t>, RestError>> ConsumerInstance::commit(
    std::optional<std::map<TopicPartition, int64_t>> offsets) {
  std::map<TopicPartition, int64_t> to_commit = offsets ? std::move(*offsets) : consumed_;
  const ErrorCode e = co_await member_.commit(to_commit);
  if (needs_rejoin(e) && (mode_ == Mode::topics || mode_ == Mode::pattern)) needs_join_ = true;
  if (e == ErrorCode::group_authorization_failed || e == ErrorCode::topic_authorization_failed)
    co_return from_kafka(e, "");
  if (e != ErrorCode::none) co_return kafka_error(e, "OffsetCommit");
  for (const auto& [tp, offset] : to_commit)
    if (auto it = consumed_.find(tp); it != consumed_.end() && it->second <= offset) consumed_.erase(it);
  co_return to_commit;
}

awaitable<std::variant<std::map<TopicPartition, std::pair<int64_t, std::string>>, RestError>>
ConsumerInstance::committed(const std::vector<TopicPartition>& partitions) {
  auto r = co_await member_.committed(partitions);
  if (auto* e = std::get_if<ErrorCode>(&r)) {
    if (*e == ErrorCode::group_authorization_failed) co_return from_kafka(*e, "");
    co_return kafka_error(*e, "OffsetFetch");
  }
  co_return std::move(std::get<0>(r));
}

awaitable<void> ConsumerInstance::close() {
  if (closed_) co_return;
  closed_ = true;
  ++subscription_epoch_;
  beat_.cancel();
  joined_.cancel();
  if (mode_ == Mode::topics || mode_ == Mode::pattern) {
    co_await auto_commit_if_due(true);
    co_await member_.leave();
  } else {
    co_await auto_commit_if_due(true);
  }
}

}  // namespace runnel::broker::admin::rest
