#include "broker/admin/rest/consumer_instance.h"

#include <algorithm>

#include "broker/admin/rest/broker_calls.h"
#include "broker/admin/rest/consumer_fetch.h"
#include "broker/logging.h"

namespace runnel::broker::admin::rest {

namespace {

using protocol::ErrorCode;
using Clock = std::chrono::steady_clock;

constexpr int16_t kListOffsetsVersion = 7;
constexpr int16_t kMetadataVersion = 12;
// How often a pattern subscription looks for topics it newly matches (the
// Java consumer asks every metadata.max.age.ms, 5 minutes; a REST client
// polls rarely, so Runnel looks at most this often, on poll).
constexpr auto kPatternRecheck = std::chrono::seconds(5);
// A poll with nothing to fetch waits this long before it looks again.
constexpr auto kIdleRound = std::chrono::milliseconds(100);

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
  mode_ = Mode::topics;
  topics_ = std::move(topics);
  if (topics_ != joined_topics_ || !member_.is_member()) needs_join_ = true;
  co_return std::nullopt;
}

awaitable<std::optional<RestError>> ConsumerInstance::subscribe_pattern(const std::string& pattern) {
  if (mode_ == Mode::assigned) co_return illegal_state("Subscription to topics, partitions and pattern are mutually exclusive");
  try {
    pattern_ = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    co_return RestError{42204, "Invalid consumer configuration: topic_pattern: " + std::string(e.what())};
  }
  mode_ = Mode::pattern;
  pattern_text_ = pattern;
  needs_join_ = true;
  last_pattern_check_ = Clock::now();
  co_return std::nullopt;
}

awaitable<void> ConsumerInstance::unsubscribe() {
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
        if (e == ErrorCode::not_leader_or_follower && forward && broker_.in_cluster()) {
          const cluster::PartitionRegistration* reg =
              broker_.metadata_cache()->partition(tp.first, PartitionId(tp.second));
          if (reg && reg->has_leader() && reg->leader != NodeId(broker_.node_id())) {
            elsewhere[reg->leader.value()].emplace_back(tp, timestamps.at(tp));
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

awaitable<std::vector<std::string>> ConsumerInstance::matching_topics() {
  p::MetadataRequest req;  // topics null: every topic the client may describe
  req.allow_auto_topic_creation = false;
  auto resp = co_await call_broker<p::MetadataApi>(broker_, client_, broker_.node_id(), req, kMetadataVersion);
  std::vector<std::string> out;
  for (const auto& t : resp->topics)
    if (t.error_code == 0 && t.name && !t.is_internal && std::regex_match(*t.name, pattern_)) out.push_back(*t.name);
  std::sort(out.begin(), out.end());
  co_return out;
}

awaitable<void> ConsumerInstance::run_join() {
  auto self = shared_from_this();  // the join outlives a poll that stopped waiting
  joining_ = true;
  join_error_.reset();
  // The positions handed out so far are committed before the partitions
  // may move (the Java consumer's auto commit on revocation).
  co_await auto_commit_if_due(true);
  // (No co_await inside a conditional expression: GCC 12 miscompiles it.)
  std::vector<std::string> topics = topics_;
  if (mode_ == Mode::pattern) topics = co_await matching_topics();
  needs_join_ = false;
  auto result = co_await member_.join(topics);
  joining_ = false;
  if (closed_ || (mode_ != Mode::topics && mode_ != Mode::pattern)) {
    // Deleted or unsubscribed while joining: out of the group again.
    if (std::holds_alternative<protocol::Assignment>(result)) co_await member_.leave();
    joined_.cancel();
    co_return;
  }
  if (auto* e = std::get_if<ErrorCode>(&result)) {
    join_error_ = *e == ErrorCode::group_authorization_failed ? from_kafka(*e, "") : kafka_error(*e, "JoinGroup");
    needs_join_ = true;
  } else {
    joined_topics_ = topics;
    std::vector<TopicPartition> partitions;
    for (const auto& [topic, parts] : std::get<protocol::Assignment>(result))
      for (int32_t p : parts) partitions.emplace_back(topic, p);
    std::sort(partitions.begin(), partitions.end());
    // Positions of partitions that stay are kept only if this member held
    // them through the rebalance; others start from the committed offset.
    positions_.clear();
    consumed_.clear();
    set_assignment(std::move(partitions));
    if (!heartbeating_) {
      heartbeating_ = true;
      asio::co_spawn(broker_.io(), heartbeat_loop(), asio::detached);
    }
  }
  joined_.cancel();
}

awaitable<std::optional<RestError>> ConsumerInstance::ensure_member(Clock::time_point deadline) {
  if (mode_ != Mode::topics && mode_ != Mode::pattern) co_return std::nullopt;
  if (mode_ == Mode::pattern && Clock::now() - last_pattern_check_ >= kPatternRecheck && !joining_) {
    last_pattern_check_ = Clock::now();
    const std::vector<std::string> matched = co_await matching_topics();
    if (matched != joined_topics_) needs_join_ = true;
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
    // poll joins again, as the Java consumer's does.
    if (e != ErrorCode::none) needs_join_ = true;
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
  while (!closed_ && Clock::now() < deadline) {
    if (joining_ || needs_join_) break;  // the next poll rejoins
    if (auto e = co_await fill_positions()) co_return *e;
    std::map<TopicPartition, int64_t> fetch;
    for (const auto& tp : assignment_) fetch[tp] = positions_.at(tp);
    if (fetch.empty()) {
      joined_.expires_at(std::min<Clock::time_point>(deadline, Clock::now() + kIdleRound));
      co_await joined_.async_wait(as_tuple_awaitable);
      continue;
    }
    FetchLimits limits;
    limits.max_wait = std::max(std::chrono::milliseconds(0),
                               std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    limits.max_bytes = max_bytes - bytes;
    limits.first_goes = records.empty();
    FetchRound round = co_await fetch_round(broker_, client_, fetch, limits);
    if (round.error) co_return *round.error;
    // Positions move only where the partition is still assigned (a
    // rebalance may have come meanwhile).
    for (const auto& [tp, offset] : fetch)
      if (positions_.count(tp)) positions_[tp] = offset;
    for (auto& r : round.records) {
      consumed_[{r.topic, r.partition}] = r.offset + 1;
      bytes += (r.key ? static_cast<int64_t>(r.key->size()) : 0) + (r.value ? static_cast<int64_t>(r.value->size()) : 0);
      records.push_back(std::move(r));
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
    if (round.records.empty() && broker_.in_cluster()) {
      // Partitions led elsewhere were asked without a wait: pause between rounds.
      joined_.expires_at(std::min<Clock::time_point>(deadline, Clock::now() + kIdleRound));
      co_await joined_.async_wait(as_tuple_awaitable);
    }
  }
  co_return records;
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
  }
}

awaitable<std::variant<std::map<TopicPartition, int64_t>, RestError>> ConsumerInstance::commit(
    std::optional<std::map<TopicPartition, int64_t>> offsets) {
  std::map<TopicPartition, int64_t> to_commit = offsets ? std::move(*offsets) : consumed_;
  const ErrorCode e = co_await member_.commit(to_commit);
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
