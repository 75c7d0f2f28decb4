#include "broker/admin/rest/consumer_group_member.h"

#include <set>

#include "broker/admin/rest/broker_calls.h"
#include "broker/logging.h"

namespace runnel::broker::admin::rest {

namespace {

using protocol::ErrorCode;

constexpr int16_t kFindCoordinatorVersion = 3;  // the last with a single key
constexpr int16_t kJoinGroupVersion = 9;
constexpr int16_t kSyncGroupVersion = 5;
constexpr int16_t kHeartbeatVersion = 4;
constexpr int16_t kLeaveGroupVersion = 5;
constexpr int16_t kOffsetCommitVersion = 9;  // the last that names topics
constexpr int16_t kOffsetFetchVersion = 7;   // the last with a single group
constexpr int16_t kMetadataVersion = 12;
constexpr const char* kAssignor = "range";
// A join that keeps failing (the coordinator moving, a broker unreachable)
// is given up after this many attempts; the next poll starts again.
constexpr int kJoinAttempts = 10;
constexpr auto kRetryBackoff = std::chrono::milliseconds(100);  // retry.backoff.ms

ErrorCode error_of(int16_t code) { return static_cast<ErrorCode>(code); }

awaitable<void> backoff(Broker& broker) {
  asio::steady_timer timer(broker.io(), kRetryBackoff);
  co_await timer.async_wait(as_tuple_awaitable);
}

}  // namespace

bool coordinator_moved(ErrorCode e) {
  return e == ErrorCode::not_coordinator || e == ErrorCode::coordinator_not_available ||
         e == ErrorCode::coordinator_load_in_progress;
}

ConsumerGroupMember::ConsumerGroupMember(Broker& broker, RestClient client, std::string group_id,
                                         MemberTimeouts timeouts)
    : broker_(broker), client_(std::move(client)), group_id_(std::move(group_id)), timeouts_(timeouts) {}

awaitable<std::variant<int32_t, ErrorCode>> ConsumerGroupMember::coordinator() {
  if (coordinator_) co_return *coordinator_;
  p::FindCoordinatorRequest req;
  req.key = group_id_;
  req.key_type = 0;
  auto resp = co_await call_broker<p::FindCoordinatorApi>(broker_, client_, broker_.node_id(), req,
                                                         kFindCoordinatorVersion);
  const ErrorCode e = error_of(resp->error_code);
  if (e != ErrorCode::none) co_return e;
  coordinator_ = resp->node_id;
  co_return *coordinator_;
}

void ConsumerGroupMember::forget_coordinator(ErrorCode error) {
  if (coordinator_moved(error)) coordinator_.reset();
}

namespace {

// The error that says whether a group request reached the coordinator.
ErrorCode group_error(const p::JoinGroupResponse& r) { return error_of(r.error_code); }
ErrorCode group_error(const p::SyncGroupResponse& r) { return error_of(r.error_code); }
ErrorCode group_error(const p::HeartbeatResponse& r) { return error_of(r.error_code); }
ErrorCode group_error(const p::LeaveGroupResponse& r) { return error_of(r.error_code); }
ErrorCode group_error(const p::OffsetFetchResponse& r) { return error_of(r.error_code); }
ErrorCode group_error(const p::OffsetCommitResponse& r) {
  for (const auto& t : r.topics)
    for (const auto& part : t.partitions)
      if (part.error_code != 0) return error_of(part.error_code);
  return ErrorCode::none;
}

template <typename Response>
bool misdirected(const Response& response) {
  return coordinator_moved(group_error(response));
}

}  // namespace

// A group request at the coordinator: the local handler first (it
// authorizes the REST client), then, in a cluster, the coordinator's
// answer where the local one says this broker is not it. nullopt: no
// coordinator could be reached.
template <typename Api>
awaitable<std::optional<typename Api::Response>> ConsumerGroupMember::at_coordinator(const typename Api::Request& req,
                                                                                     int16_t version) {
  auto found = co_await coordinator();
  if (std::holds_alternative<ErrorCode>(found)) co_return std::nullopt;
  const int32_t node = std::get<int32_t>(found);
  auto r = co_await call_broker<Api>(broker_, client_, broker_.node_id(), req, version);
  if (broker_.in_cluster() && node != broker_.node_id() && misdirected(*r))
    r = co_await call_broker<Api>(broker_, client_, node, req, version);
  if (!r) coordinator_.reset();
  co_return r;
}

awaitable<std::variant<protocol::Assignment, ErrorCode>> ConsumerGroupMember::join(
    const std::vector<std::string>& topics) {
  ErrorCode last = ErrorCode::coordinator_not_available;
  // A leave() while this join waits ends it: the member is out of the
  // group and must not join again as a new one.
  const uint64_t leaves = leaves_;
  const auto left = [&] { return leaves_ != leaves; };
  for (int attempt = 0; attempt < kJoinAttempts; ++attempt) {
    p::JoinGroupRequest join;
    join.group_id = group_id_;
    join.session_timeout_ms = timeouts_.session_timeout_ms;
    join.rebalance_timeout_ms = timeouts_.rebalance_timeout_ms;
    join.member_id = member_id_;
    join.protocol_type = "consumer";
    auto& proto = join.protocols.emplace_back();
    proto.name = kAssignor;
    proto.metadata = protocol::encode_subscription({topics});
    auto jr = co_await at_coordinator<p::JoinGroupApi>(join, kJoinGroupVersion);
    if (left()) co_return ErrorCode::unknown_member_id;
    if (!jr) {
      co_await backoff(broker_);
      if (left()) co_return ErrorCode::unknown_member_id;
      continue;
    }
    const ErrorCode je = error_of(jr->error_code);
    if (je == ErrorCode::member_id_required) {
      member_id_ = jr->member_id;
      --attempt;  // the protocol working, not a failure
      continue;
    }
    if (je == ErrorCode::unknown_member_id || je == ErrorCode::illegal_generation) {
      member_id_.clear();
      generation_ = -1;
      continue;
    }
    if (coordinator_moved(je) || je == ErrorCode::rebalance_in_progress) {
      forget_coordinator(je);
      last = je;
      co_await backoff(broker_);
      continue;
    }
    if (je != ErrorCode::none) co_return je;
    member_id_ = jr->member_id;
    generation_ = jr->generation_id;

    p::SyncGroupRequest sync;
    sync.group_id = group_id_;
    sync.generation_id = jr->generation_id;
    sync.member_id = jr->member_id;
    sync.protocol_type = "consumer";
    sync.protocol_name = jr->protocol_name;
    if (jr->leader == jr->member_id) {
      // The leader assigns every member's topics, not only its own.
      std::map<std::string, protocol::Subscription> members;
      std::set<std::string> wanted;
      for (const auto& m : jr->members) {
        auto s = protocol::decode_subscription(m.metadata);
        if (!s) co_return ErrorCode::inconsistent_group_protocol;
        wanted.insert(s->topics.begin(), s->topics.end());
        members[m.member_id] = std::move(*s);
      }
      p::MetadataRequest mreq;
      mreq.topics = std::vector<p::MetadataRequest::MetadataRequestTopic>();
      for (const auto& t : wanted) mreq.topics->emplace_back().name = t;
      mreq.allow_auto_topic_creation = true;  // the Java consumer's allow.auto.create.topics
      auto md = co_await call_broker<p::MetadataApi>(broker_, client_, broker_.node_id(), mreq, kMetadataVersion);
      if (left()) co_return ErrorCode::unknown_member_id;
      std::map<std::string, int32_t> counts;
      for (const auto& t : md->topics)
        if (t.error_code == 0 && t.name) counts[*t.name] = static_cast<int32_t>(t.partitions.size());
      for (const auto& [member, a] : protocol::range_assign(members, counts)) {
        auto& sa = sync.assignments.emplace_back();
        sa.member_id = member;
        sa.assignment = protocol::encode_assignment(a);
      }
    }
    auto sr = co_await at_coordinator<p::SyncGroupApi>(sync, kSyncGroupVersion);
    if (left()) co_return ErrorCode::unknown_member_id;
    if (!sr) {
      co_await backoff(broker_);
      continue;
    }
    const ErrorCode se = error_of(sr->error_code);
    if (se == ErrorCode::rebalance_in_progress) {
      --attempt;
      continue;
    }
    if (se == ErrorCode::unknown_member_id || se == ErrorCode::illegal_generation) {
      member_id_.clear();
      generation_ = -1;
      continue;
    }
    if (coordinator_moved(se)) {
      forget_coordinator(se);
      last = se;
      co_await backoff(broker_);
      continue;
    }
    if (se != ErrorCode::none) {
      generation_ = -1;
      co_return se;
    }
    auto assignment = protocol::decode_assignment(sr->assignment);
    if (!assignment) {
      generation_ = -1;
      co_return ErrorCode::inconsistent_group_protocol;
    }
    co_return std::move(*assignment);
  }
  generation_ = -1;
  co_return last;
}

awaitable<ErrorCode> ConsumerGroupMember::heartbeat() {
  if (generation_ < 0) co_return ErrorCode::unknown_member_id;
  p::HeartbeatRequest req;
  req.group_id = group_id_;
  req.generation_id = generation_;
  req.member_id = member_id_;
  auto r = co_await at_coordinator<p::HeartbeatApi>(req, kHeartbeatVersion);
  if (!r) co_return ErrorCode::coordinator_not_available;
  const ErrorCode e = error_of(r->error_code);
  forget_coordinator(e);
  // A join or leave meanwhile made the answer stale.
  if (generation_ != req.generation_id || member_id_ != req.member_id) co_return ErrorCode::none;
  if (e == ErrorCode::unknown_member_id || e == ErrorCode::illegal_generation || e == ErrorCode::fenced_instance_id) {
    generation_ = -1;
    if (e == ErrorCode::unknown_member_id) member_id_.clear();
  }
  co_return e;
}

awaitable<void> ConsumerGroupMember::leave() {
  ++leaves_;
  if (member_id_.empty()) co_return;
  p::LeaveGroupRequest req;
  req.group_id = group_id_;
  auto& m = req.members.emplace_back();
  m.member_id = member_id_;
  m.reason = "the REST consumer instance was deleted or unsubscribed";
  member_id_.clear();
  generation_ = -1;
  auto r = co_await at_coordinator<p::LeaveGroupApi>(req, kLeaveGroupVersion);
  if (r && r->error_code != 0)
    RLOG_INFO("REST consumer leaving group %s: error %d", group_id_.c_str(), r->error_code);
}

awaitable<ErrorCode> ConsumerGroupMember::commit(const std::map<TopicPartition, int64_t>& offsets) {
  if (offsets.empty()) co_return ErrorCode::none;
  p::OffsetCommitRequest req;
  req.group_id = group_id_;
  req.generation_id_or_member_epoch = generation_;
  req.member_id = generation_ >= 0 ? member_id_ : "";
  for (const auto& [tp, offset] : offsets) {
    if (req.topics.empty() || req.topics.back().name != tp.first) req.topics.emplace_back().name = tp.first;
    auto& part = req.topics.back().partitions.emplace_back();
    part.partition_index = tp.second;
    part.committed_offset = offset;
    part.committed_metadata = "";
  }
  for (int attempt = 0;; ++attempt) {
    auto r = co_await at_coordinator<p::OffsetCommitApi>(req, kOffsetCommitVersion);
    if (!r) {
      if (attempt + 1 >= kJoinAttempts) co_return ErrorCode::coordinator_not_available;
      co_await backoff(broker_);
      continue;
    }
    ErrorCode first = ErrorCode::none;
    for (const auto& t : r->topics)
      for (const auto& part : t.partitions)
        if (part.error_code != 0 && first == ErrorCode::none) first = error_of(part.error_code);
    if (coordinator_moved(first) && attempt + 1 < kJoinAttempts) {
      forget_coordinator(first);
      co_await backoff(broker_);
      continue;
    }
    co_return first;
  }
}

awaitable<std::variant<std::map<TopicPartition, std::pair<int64_t, std::string>>, ErrorCode>>
ConsumerGroupMember::committed(const std::vector<TopicPartition>& partitions) {
  p::OffsetFetchRequest req;
  req.group_id = group_id_;
  req.topics = std::vector<p::OffsetFetchRequest::OffsetFetchRequestTopic>();
  for (const auto& [topic, partition] : partitions) {
    if (req.topics->empty() || req.topics->back().name != topic) req.topics->emplace_back().name = topic;
    req.topics->back().partition_indexes.push_back(partition);
  }
  for (int attempt = 0;; ++attempt) {
    auto r = co_await at_coordinator<p::OffsetFetchApi>(req, kOffsetFetchVersion);
    const ErrorCode e = r ? error_of(r->error_code) : ErrorCode::coordinator_not_available;
    if (coordinator_moved(e) && attempt + 1 < kJoinAttempts) {
      forget_coordinator(e);
      co_await backoff(broker_);
      continue;
    }
    if (e != ErrorCode::none) co_return e;
    std::map<TopicPartition, std::pair<int64_t, std::string>> out;
    for (const auto& t : r->topics)
      for (const auto& part : t.partitions) {
        if (part.error_code != 0) co_return error_of(part.error_code);
        if (part.committed_offset >= 0)
          out[{t.name, part.partition_index}] = {part.committed_offset, part.metadata.value_or("")};
      }
    co_return out;
  }
}

}  // namespace runnel::broker::admin::rest
