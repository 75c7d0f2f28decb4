#include "broker/group/classic_group.h"

#include <algorithm>
#include <climits>

#include "protocol/codec/reader.h"

namespace runnel::broker::group {

const char* state_name(GroupState s) {
  switch (s) {
    case GroupState::empty: return "Empty";
    case GroupState::preparing_rebalance: return "PreparingRebalance";
    case GroupState::completing_rebalance: return "CompletingRebalance";
    case GroupState::stable: return "Stable";
    case GroupState::dead: return "Dead";
  }
  return "Unknown";
}

const Bytes* Member::metadata(const std::string& protocol) const {
  for (const auto& p : protocols)
    if (p.name == protocol) return &p.metadata;
  return nullptr;
}

bool Group::is_static_member_fenced(const std::optional<std::string>& instance_id, const std::string& member_id) const {
  if (!instance_id) return false;
  auto it = static_members.find(*instance_id);
  return it != static_members.end() && it->second != member_id;
}

ErrorCode Group::validate_member(const std::string& member_id, const std::optional<std::string>& instance_id) const {
  if (instance_id) {
    auto it = static_members.find(*instance_id);
    if (it == static_members.end()) return ErrorCode::unknown_member_id;
    if (it->second != member_id) return ErrorCode::fenced_instance_id;
  }
  return has(member_id) ? ErrorCode::none : ErrorCode::unknown_member_id;
}

bool Group::has_pending_txn_offset(const TopicPartition& tp) const {
  for (const auto& [producer_id, pending] : pending_txn_offsets)
    if (pending.count(tp)) return true;
  return false;
}

void Group::erase_offset(const TopicPartition& tp) {
  offsets.erase(tp);
  for (auto it = pending_txn_offsets.begin(); it != pending_txn_offsets.end();) {
    it->second.erase(tp);
    it = it->second.empty() ? pending_txn_offsets.erase(it) : std::next(it);
  }
}

ErrorCode Group::validate_offset_commit(const std::string& member_id, const std::optional<std::string>& instance_id,
                                        int32_t generation_id, bool transactional) const {
  if (state == GroupState::dead) return ErrorCode::coordinator_not_available;
  if (generation_id < 0 && state == GroupState::empty) return ErrorCode::none;
  if (generation_id >= 0 || !member_id.empty() || instance_id) {
    if (ErrorCode e = validate_member(member_id, instance_id); e != ErrorCode::none) return e;
    if (generation_id != generation) return ErrorCode::illegal_generation;
  } else if (!transactional) {
    // Without member id, generation or instance id (OffsetCommit v0's
    // shape) only an Empty group accepts offsets.
    return ErrorCode::unknown_member_id;
  }
  // The member has this generation's JoinGroup answer but not its
  // assignment yet: it should finish the rebalance, then commit.
  if (!transactional && state == GroupState::completing_rebalance) return ErrorCode::rebalance_in_progress;
  return ErrorCode::none;
}

bool Group::supports_protocols(const std::string& member_protocol_type, const std::vector<Protocol>& protocols) const {
  if (members.empty()) return !member_protocol_type.empty() && !protocols.empty();
  if (!protocol_type || *protocol_type != member_protocol_type) return false;
  for (const auto& p : protocols) {
    bool everyone = std::all_of(members.begin(), members.end(),
                                [&](const auto& m) { return m.second.metadata(p.name) != nullptr; });
    if (everyone) return true;
  }
  return false;
}

size_t Group::awaiting_join_count() const {
  return static_cast<size_t>(
      std::count_if(members.begin(), members.end(), [](const auto& m) { return m.second.is_awaiting_join(); }));
}

bool Group::has_all_members_joined() const {
  return members.size() == awaiting_join_count() && pending_members.empty();
}

int32_t Group::max_rebalance_timeout_ms() const {
  int32_t t = 0;
  for (const auto& [id, m] : members) t = std::max(t, m.rebalance_timeout_ms);
  return t;
}

std::string Group::select_protocol() const {
  // Candidates: protocols every member supports, in the first member's order.
  std::vector<std::string> candidates;
  if (members.empty()) return {};
  for (const auto& p : members.begin()->second.protocols) {
    bool everyone = std::all_of(members.begin(), members.end(),
                                [&](const auto& m) { return m.second.metadata(p.name) != nullptr; });
    if (everyone) candidates.push_back(p.name);
  }
  // Each member votes for its most preferred candidate.
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members)
    for (const auto& p : m.protocols)
      if (std::find(candidates.begin(), candidates.end(), p.name) != candidates.end()) {
        ++votes[p.name];
        break;
      }
  std::string best;
  int best_votes = -1;
  for (const auto& c : candidates)
    if (votes[c] > best_votes) best = c, best_votes = votes[c];
  return best;
}

namespace {

// ConsumerProtocolSubscription (non-flexible): version int16, topics [string], ...
std::optional<std::vector<std::string>> subscribed_topics(const Bytes& metadata) {
  protocol::Reader r(protocol::ByteView(metadata.data(), metadata.size()));
  int16_t version = r.i16();
  if (!r.ok() || version < 0) return std::nullopt;
  int32_t count = r.i32();
  std::vector<std::string> topics;
  for (int32_t i = 0; r.ok() && i < count; ++i) {
    int16_t len = r.i16();
    if (len < 0) return std::nullopt;
    topics.push_back(r.str(len));
  }
  if (!r.ok()) return std::nullopt;
  return topics;
}

}  // namespace

bool Group::is_subscribed_to(const std::string& topic) const {
  if (state == GroupState::empty || !protocol_type || *protocol_type != "consumer" || !protocol_name) return false;
  for (const auto& [id, m] : members) {
    const Bytes* md = m.metadata(*protocol_name);
    if (!md) continue;
    auto topics = subscribed_topics(*md);
    if (!topics) return false;
    if (std::find(topics->begin(), topics->end(), topic) != topics->end()) return true;
  }
  return false;
}

}  // namespace runnel::broker::group
