#include "cli/group_member.h"

#include "protocol/consumer_protocol.h"
#include "protocol/messages/11_join_group.h"
#include "protocol/messages/12_heartbeat.h"
#include "protocol/messages/13_leave_group.h"
#include "protocol/messages/14_sync_group.h"

namespace runnel::cli {

using namespace protocol;

namespace {

constexpr int16_t kMemberIdRequired = 79;
constexpr int16_t kUnknownMemberId = 25;
constexpr int16_t kIllegalGeneration = 22;
constexpr int16_t kRebalanceInProgress = 27;

}  // namespace

GroupMember::GroupMember(Cluster& cluster, std::string group_id, std::string topic, GroupOptions options)
    : cluster_(cluster), group_id_(std::move(group_id)), topic_(std::move(topic)), options_(options) {}

std::vector<int32_t> GroupMember::join() {
  // Only failures count against the retries; the KIP-394 round trip and a
  // rebalance that restarts are the protocol working.
  int failures = 0;
  auto failed = [&]() {
    if (failures >= cluster_.config().retries()) return false;
    cluster_.forget_all();
    cluster_.backoff(failures++);
    return true;
  };
  for (;;) {
    auto& conn = cluster_.with_retries([&]() -> BrokerConnection& { return cluster_.coordinator(group_id_); });
    JoinGroupRequest join;
    join.group_id = group_id_;
    join.session_timeout_ms = static_cast<int32_t>(options_.session_timeout.count());
    join.rebalance_timeout_ms = static_cast<int32_t>(options_.rebalance_timeout.count());
    join.member_id = generation_.member_id;
    join.protocol_type = "consumer";
    JoinGroupRequest::JoinGroupRequestProtocol proto;
    proto.name = "range";
    proto.metadata = encode_subscription({{topic_}});
    join.protocols.push_back(proto);
    int16_t jv = conn.version<JoinGroupApi>();
    JoinGroupResponse jr;
    try {
      // The coordinator holds JoinGroup until the rebalance completes.
      jr = conn.call<JoinGroupApi>(join, jv, options_.rebalance_timeout);
    } catch (const ConnectError&) {
      if (!failed()) throw;
      continue;
    }
    if (jr.error_code == kMemberIdRequired) {
      generation_.member_id = jr.member_id;
      continue;
    }
    if (jr.error_code == kUnknownMemberId || jr.error_code == kIllegalGeneration) {
      generation_ = {};
      continue;
    }
    if (is_retriable(jr.error_code) && failed()) continue;
    check(jr.error_code, "JoinGroup for group '" + group_id_ + "'");
    generation_ = {jr.generation_id, jr.member_id};

    SyncGroupRequest sync;
    sync.group_id = group_id_;
    sync.generation_id = jr.generation_id;
    sync.member_id = jr.member_id;
    sync.protocol_type = "consumer";
    sync.protocol_name = jr.protocol_name;
    if (jr.leader == jr.member_id) {
      // The leader assigns every member's topics, not only its own.
      std::map<std::string, Subscription> members;
      std::vector<std::string> topics;
      for (const auto& m : jr.members) {
        auto s = decode_subscription(m.metadata);
        if (!s) throw KafkaError(23, "JoinGroup for group '" + group_id_ + "'", "a member's subscription is malformed");
        for (const auto& t : s->topics) topics.push_back(t);
        members[m.member_id] = *s;
      }
      auto md = cluster_.with_retries([&] { return cluster_.metadata(topics); });
      std::map<std::string, int32_t> counts;
      for (const auto& [name, t] : md.topics)
        if (t.error_code == 0) counts[name] = static_cast<int32_t>(t.partitions.size());
      for (const auto& [member, a] : range_assign(members, counts)) {
        SyncGroupRequest::SyncGroupRequestAssignment sa;
        sa.member_id = member;
        sa.assignment = encode_assignment(a);
        sync.assignments.push_back(sa);
      }
    }
    SyncGroupResponse sr;
    try {
      auto& coordinator = cluster_.coordinator(group_id_);
      sr = coordinator.call<SyncGroupApi>(sync, coordinator.version<SyncGroupApi>(), options_.rebalance_timeout);
    } catch (const ConnectError&) {
      if (!failed()) throw;
      continue;
    }
    if (sr.error_code == kRebalanceInProgress) continue;
    if (is_retriable(sr.error_code) && failed()) continue;
    if (sr.error_code == kUnknownMemberId || sr.error_code == kIllegalGeneration) {
      generation_ = {};
      continue;
    }
    check(sr.error_code, "SyncGroup for group '" + group_id_ + "'");
    auto assignment = decode_assignment(sr.assignment);
    if (!assignment) throw KafkaError(23, "SyncGroup for group '" + group_id_ + "'", "the assignment is malformed");
    last_heartbeat_ = std::chrono::steady_clock::now();
    return (*assignment)[topic_];
  }
}

bool GroupMember::heartbeat_if_due() {
  auto now = std::chrono::steady_clock::now();
  if (now - last_heartbeat_ < options_.heartbeat_interval) return true;
  last_heartbeat_ = now;
  HeartbeatRequest req;
  req.group_id = group_id_;
  req.generation_id = generation_.generation_id;
  req.member_id = generation_.member_id;
  auto resp = cluster_.with_retries([&] {
    auto& conn = cluster_.coordinator(group_id_);
    auto r = conn.call<HeartbeatApi>(req, conn.version<HeartbeatApi>());
    if (is_retriable(r.error_code)) throw KafkaError(r.error_code, "Heartbeat");
    return r;
  });
  if (resp.error_code == kRebalanceInProgress) return false;
  if (resp.error_code == kUnknownMemberId || resp.error_code == kIllegalGeneration) {
    generation_ = {};
    return false;
  }
  check(resp.error_code, "Heartbeat for group '" + group_id_ + "'");
  return true;
}

void GroupMember::commit(const std::map<int32_t, int64_t>& positions) {
  std::map<TopicPartition, int64_t> offsets;
  for (const auto& [p, off] : positions) offsets[{topic_, p}] = off;
  commit_offsets(cluster_, group_id_, generation_, offsets);
}

void GroupMember::leave() {
  if (generation_.member_id.empty()) return;
  try {
    auto& conn = cluster_.coordinator(group_id_);
    int16_t v = conn.version<LeaveGroupApi>();
    LeaveGroupRequest req;
    req.group_id = group_id_;
    if (v >= 3) {
      LeaveGroupRequest::MemberIdentity m;
      m.member_id = generation_.member_id;
      req.members.push_back(m);
    } else {
      req.member_id = generation_.member_id;
    }
    conn.call<LeaveGroupApi>(req, v);
  } catch (const std::exception&) {
    // Leaving is a courtesy: the session timeout removes the member anyway.
  }
  generation_ = {};
}

}  // namespace runnel::cli
