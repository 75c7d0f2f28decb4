#include "broker/group/group_metadata_manager.h"

#include <algorithm>
#include <cstdio>
#include <random>
#include <utility>

#include "broker/logging.h"

namespace runnel::broker::group {

namespace {

// What a JoinGroup sets on a member, whether it is new, rejoining or a
// static member coming back: its protocols and its two timeouts.
void take_join_metadata(Member& m, const JoinRequest& req) {
  m.protocols = req.protocols;
  m.rebalance_timeout_ms = req.rebalance_timeout_ms;
  m.session_timeout_ms = req.session_timeout_ms;
}

// Java's UUID.randomUUID().toString(): version 4, variant 2, 8-4-4-4-12 hex.
std::string random_uuid_text() {
  static std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;
  lo = (lo & ~(0xC000000000000000ULL)) | 0x8000000000000000ULL;
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
                (unsigned long long)((hi >> 16) & 0xFFFF), (unsigned long long)(hi & 0xFFFF),
                (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xFFFFFFFFFFFFULL));
  return buf;
}

// The timers' keys, Kafka's (classicGroupHeartbeatKey, classicGroupJoinKey,
// classicGroupSyncKey).
std::string heartbeat_key(const std::string& group, const std::string& member) {
  return "heartbeat-" + group + "-" + member;
}
std::string join_key(const std::string& group) { return "join-" + group; }
std::string sync_key(const std::string& group) { return "sync-" + group; }

JoinResult join_error(const std::string& member_id, ErrorCode error) {
  JoinResult r;
  r.error = error;
  r.member_id = member_id;
  return r;
}

SyncResult sync_error(ErrorCode error) {
  SyncResult r;
  r.error = error;
  return r;
}

}  // namespace

GroupMetadataManager::GroupMetadataManager(const CoordinatorConfig& config, OffsetsStore& store, const Clock& clock,
                                           CoordinatorTimer& timer)
    : config_(config), store_(store), clock_(clock), timer_(timer) {}

int32_t GroupMetadataManager::partition_for(const std::string& group_id) const {
  return offsets_partition_for(group_id, config_.offsets_partitions);
}

const Group* GroupMetadataManager::find(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

Group* GroupMetadataManager::find_mutable(const std::string& group_id) {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : it->second.get();
}

Group& GroupMetadataManager::get_or_create(const std::string& group_id) {
  auto& slot = groups_[group_id];
  if (!slot) {
    slot = std::make_unique<Group>();
    slot->id = group_id;
    slot->partition = partition_for(group_id);
    slot->current_state_timestamp = now();
  }
  return *slot;
}

void GroupMetadataManager::drop_group(const std::string& group_id) {
  auto it = groups_.find(group_id);
  if (it == groups_.end()) return;
  const std::string id = group_id;  // the caller's string may be the group's own
  for (auto& [mid, m] : it->second->members) timer_.cancel(heartbeat_key(id, mid));
  for (auto& mid : it->second->pending_members) timer_.cancel(heartbeat_key(id, mid));
  timer_.cancel(join_key(id));
  timer_.cancel(sync_key(id));
  groups_.erase(it);
}

void GroupMetadataManager::unload_all() {
  unload([](int32_t) { return true; });
  if (owned_) owned_->clear();
}

void GroupMetadataManager::unload_partition(int32_t partition) {
  unload([partition](int32_t p) { return p == partition; });
  loading_.erase(partition);
  if (owned_) owned_->erase(partition);
}

void GroupMetadataManager::unload(const std::function<bool(int32_t)>& which) {
  // Kafka's onGroupUnloaded: the group goes Dead and whoever waits on it is
  // told to find the coordinator again. Answered after the groups are gone,
  // so a callback that comes straight back finds nothing stale.
  std::vector<std::pair<JoinCallback, JoinResult>> joins;
  std::vector<SyncCallback> syncs;
  std::vector<std::string> unloaded;
  for (auto& [gid, g] : groups_) {
    if (!which(g->partition)) continue;
    unloaded.push_back(gid);
    transition(*g, GroupState::dead);
    for (auto& [mid, m] : g->members) {
      if (m.is_awaiting_join()) joins.emplace_back(std::exchange(m.awaiting_join, {}), join_error(mid, ErrorCode::not_coordinator));
      if (m.is_awaiting_sync()) syncs.push_back(std::exchange(m.awaiting_sync, {}));
    }
  }
  for (auto& id : unloaded) drop_group(id);
  for (auto& [cb, r] : joins) cb(std::move(r));
  for (auto& cb : syncs) cb(SyncResult{ErrorCode::not_coordinator, {}, {}, {}});
}

void GroupMetadataManager::transition(Group& g, GroupState to) {
  g.state = to;
  g.current_state_timestamp = now();
}

// ---- loading ----

void GroupMetadataManager::replay(const GroupMetadataKey& key, std::optional<ByteView> value) {
  if (!value) {
    drop_group(key.group);
    return;
  }
  auto v = decode_group_value(*value);
  if (!v) return;
  Group& g = get_or_create(key.group);
  g.members.clear();
  g.static_members.clear();
  g.protocol_type = v->protocol_type.empty() ? std::nullopt : std::optional(v->protocol_type);
  g.generation = v->generation;
  g.protocol_name = v->protocol;
  g.leader_id = v->leader;
  g.current_state_timestamp = v->current_state_timestamp;
  for (auto& mr : v->members) {
    Member m;
    m.member_id = mr.member_id;
    m.group_instance_id = mr.group_instance_id;
    m.client_id = mr.client_id;
    m.client_host = mr.client_host;
    m.rebalance_timeout_ms = mr.rebalance_timeout;
    m.session_timeout_ms = mr.session_timeout;
    m.protocol_type = v->protocol_type;
    if (v->protocol) m.protocols.push_back({*v->protocol, mr.subscription});
    m.assignment = mr.assignment;
    m.join_order = ++join_counter_;
    if (m.group_instance_id) g.static_members[*m.group_instance_id] = m.member_id;
    g.members[m.member_id] = std::move(m);
  }
  g.state = g.members.empty() ? GroupState::empty : GroupState::stable;
}

void GroupMetadataManager::end_loading(int32_t partition) {
  loading_.erase(partition);
  std::vector<std::string> empty_groups;
  for (auto& [id, g] : groups_) {
    if (g->partition != partition) continue;
    for (auto& [mid, m] : g->members) schedule_heartbeat(*g, m);
    if (g->members.empty() && !g->holds_offsets() && g->generation == 0) empty_groups.push_back(id);
  }
  for (auto& id : empty_groups) drop_group(id);
}

// ---- JoinGroup ----

void GroupMetadataManager::join(JoinRequest req, JoinCallback done) {
  if (req.group_id.empty()) return done(join_error(req.member_id, ErrorCode::invalid_group_id));
  if (!owns(partition_for(req.group_id))) return done(join_error(req.member_id, ErrorCode::not_coordinator));
  if (is_loading(partition_for(req.group_id)))
    return done(join_error(req.member_id, ErrorCode::coordinator_load_in_progress));
  if (req.session_timeout_ms < config_.min_session_timeout_ms || req.session_timeout_ms > config_.max_session_timeout_ms)
    return done(join_error(req.member_id, ErrorCode::invalid_session_timeout));
  const bool unknown_member = req.member_id.empty();
  Group* g = find_mutable(req.group_id);
  if (!g) {
    if (!unknown_member) return done(join_error(req.member_id, ErrorCode::unknown_member_id));
    g = &get_or_create(req.group_id);
  }
  // group.max.size (Kafka's acceptJoiningMember).
  bool accept = true;
  const size_t max = static_cast<size_t>(config_.max_size);
  switch (g->state) {
    case GroupState::empty:
    case GroupState::dead: break;
    case GroupState::preparing_rebalance:
      accept = (g->has(req.member_id) && g->members.at(req.member_id).is_awaiting_join()) || g->awaiting_join_count() < max;
      break;
    default: accept = g->has(req.member_id) || g->members.size() < max;
  }
  if (!accept) {
    if (g->has(req.member_id)) remove_member_and_update_group(*g, req.member_id, "group max size reached");
    if (g->state == GroupState::empty && g->members.empty() && !g->holds_offsets() && g->generation == 0)
      drop_group(req.group_id);
    return done(join_error("", ErrorCode::group_max_size_reached));
  }
  if (unknown_member) join_new_member(*g, req, done);
  else join_current_member(*g, req, done);
  if (Group* after = find_mutable(req.group_id)) maybe_complete_join(*after);
}

void GroupMetadataManager::join_new_member(Group& g, JoinRequest& req, JoinCallback& done) {
  if (g.state == GroupState::dead) return done(join_error("", ErrorCode::coordinator_not_available));
  if (!g.supports_protocols(req.protocol_type, req.protocols)) {
    bool fresh = g.members.empty() && !g.holds_offsets() && g.generation == 0 && g.pending_members.empty();
    std::string id = g.id;
    done(join_error("", ErrorCode::inconsistent_group_protocol));
    if (fresh) drop_group(id);
    return;
  }
  if (req.group_instance_id) return join_static_member(g, req, done);
  std::string member_id = req.client_id + "-" + random_uuid_text();
  if (req.require_known_member_id) {
    // KIP-394: hand out the id and wait for the member to come back with it.
    g.pending_members.insert(member_id);
    timer_.schedule(heartbeat_key(g.id, member_id), now() + req.session_timeout_ms,
                    [this, group = g.id, member_id] { expire_pending_member(group, member_id); });
    return done(join_error(member_id, ErrorCode::member_id_required));
  }
  add_member_and_rebalance(g, req, member_id, std::move(done));
}

void GroupMetadataManager::join_static_member(Group& g, JoinRequest& req, JoinCallback& done) {
  std::string new_id = *req.group_instance_id + "-" + random_uuid_text();
  auto known = g.static_members.find(*req.group_instance_id);
  if (known == g.static_members.end()) return add_member_and_rebalance(g, req, new_id, std::move(done));

  // A known static member restarted: it takes over its old identity, and
  // whoever still uses the old member id is fenced.
  std::string old_id = known->second;
  Member m = std::move(g.members.at(old_id));
  g.members.erase(old_id);
  timer_.cancel(heartbeat_key(g.id, old_id));
  if (m.awaiting_join) std::exchange(m.awaiting_join, {})(join_error(old_id, ErrorCode::fenced_instance_id));
  if (m.awaiting_sync) std::exchange(m.awaiting_sync, {})(sync_error(ErrorCode::fenced_instance_id));
  m.member_id = new_id;
  take_join_metadata(m, req);
  m.client_id = req.client_id;
  m.client_host = req.client_host;
  m.awaiting_join = std::move(done);
  g.static_members[*req.group_instance_id] = new_id;
  if (g.leader_id == old_id) g.leader_id = new_id;
  if (g.pending_sync.erase(old_id)) g.pending_sync.insert(new_id);
  Member& placed = g.members[new_id] = std::move(m);

  switch (g.state) {
    case GroupState::stable: {
      // No rebalance when the group would pick the same protocol: persist the
      // new member id and give the member the current generation.
      if (g.protocol_name && g.select_protocol() == *g.protocol_name) {
        const bool skip = g.is_leader(new_id) && req.supports_skip_assignment;
        JoinCallback cb = std::exchange(placed.awaiting_join, {});
        schedule_heartbeat(g, placed);
        return store_group(g, [this, group_id = g.id, new_id, skip, cb = std::move(cb)](std::error_code ec) {
          if (ec) return cb(join_error(new_id, ErrorCode::unknown_server_error));
          const Group* now = find(group_id);
          if (!now || !now->has(new_id)) return cb(join_error(new_id, ErrorCode::unknown_member_id));
          cb(current_join_result(*now, now->members.at(new_id), skip, skip));
        });
      }
      return maybe_prepare_rebalance(g, "static member joined with a change of protocol");
    }
    case GroupState::completing_rebalance:
      return prepare_rebalance(g, "static member rejoined while the group was completing a rebalance");
    default: return;  // PreparingRebalance: it is part of the rebalance now
  }
}

void GroupMetadataManager::join_current_member(Group& g, JoinRequest& req, JoinCallback& done) {
  if (g.state == GroupState::dead) return done(join_error(req.member_id, ErrorCode::coordinator_not_available));
  if (g.pending_members.count(req.member_id)) {
    if (!g.supports_protocols(req.protocol_type, req.protocols))
      return done(join_error(req.member_id, ErrorCode::inconsistent_group_protocol));
    return add_member_and_rebalance(g, req, req.member_id, std::move(done));
  }
  if (g.is_static_member_fenced(req.group_instance_id, req.member_id))
    return done(join_error(req.member_id, ErrorCode::fenced_instance_id));
  if (!g.has(req.member_id)) return done(join_error(req.member_id, ErrorCode::unknown_member_id));
  if (!g.supports_protocols(req.protocol_type, req.protocols))
    return done(join_error(req.member_id, ErrorCode::inconsistent_group_protocol));
  Member& m = g.members.at(req.member_id);
  switch (g.state) {
    case GroupState::preparing_rebalance: return update_member_and_rebalance(g, m, req, std::move(done));
    case GroupState::completing_rebalance:
      if (m.protocols == req.protocols) {
        // A retried join: the member simply lost the response.
        return done(current_join_result(g, m, g.is_leader(m.member_id), false));
      }
      return update_member_and_rebalance(g, m, req, std::move(done));
    case GroupState::stable:
      if (g.is_leader(m.member_id) || m.protocols != req.protocols)
        return update_member_and_rebalance(g, m, req, std::move(done));
      return done(current_join_result(g, m, false, false));
    default: return done(join_error(req.member_id, ErrorCode::unknown_member_id));
  }
}

void GroupMetadataManager::add_member_and_rebalance(Group& g, JoinRequest& req, const std::string& member_id,
                                                JoinCallback done) {
  Member m;
  m.member_id = member_id;
  m.group_instance_id = req.group_instance_id;
  m.client_id = req.client_id;
  m.client_host = req.client_host;
  m.protocol_type = req.protocol_type;
  take_join_metadata(m, req);
  m.awaiting_join = std::move(done);
  m.join_order = ++join_counter_;
  if (g.members.empty()) g.protocol_type = req.protocol_type;
  if (m.group_instance_id) g.static_members[*m.group_instance_id] = member_id;
  if (!g.leader_id || !g.has(*g.leader_id)) g.leader_id = member_id;
  g.pending_members.erase(member_id);
  // A new member extends the initial delay of a rebalance that started from
  // Empty (Kafka: the previous state was Empty), whether or not the group had
  // generations before: a consumer fleet restarting forms one generation.
  if (g.state == GroupState::preparing_rebalance && g.initial_delay) g.new_member_added = true;
  Member& placed = g.members[member_id] = std::move(m);
  schedule_heartbeat(g, placed);
  maybe_prepare_rebalance(g, "Adding new member " + member_id);
}

void GroupMetadataManager::update_member_and_rebalance(Group& g, Member& m, JoinRequest& req, JoinCallback done) {
  take_join_metadata(m, req);
  // A member that joins again while its earlier join waits: the earlier one is answered.
  if (m.awaiting_join) std::exchange(m.awaiting_join, {})(join_error(m.member_id, ErrorCode::rebalance_in_progress));
  m.awaiting_join = std::move(done);
  maybe_prepare_rebalance(g, "Updating metadata for member " + m.member_id);
}

void GroupMetadataManager::maybe_prepare_rebalance(Group& g, const std::string& reason) {
  if (g.state == GroupState::stable || g.state == GroupState::completing_rebalance || g.state == GroupState::empty)
    prepare_rebalance(g, reason);
}

void GroupMetadataManager::prepare_rebalance(Group& g, const std::string& reason) {
  // Kafka's INFO line for each rebalance: what a flaky group test needs first.
  RLOG_INFO("Preparing to rebalance group %s in state %s with old generation %d (__consumer_offsets-%d) (reason: %s)",
            g.id.c_str(), state_name(g.state), g.generation, g.partition, reason.c_str());
  if (g.state == GroupState::completing_rebalance)
    reset_and_propagate_assignment_error(g, ErrorCode::rebalance_in_progress);
  g.pending_sync.clear();
  timer_.cancel(sync_key(g.id));
  if (g.state == GroupState::empty) {
    // InitialDelayedJoin: wait for more members before the first generation.
    g.initial_delay = true;
    g.initial_remaining_ms = std::max(g.max_rebalance_timeout_ms() - config_.initial_rebalance_delay_ms, 0);
    schedule_join(g, config_.initial_rebalance_delay_ms);
  } else {
    // DelayedJoin: members have the rebalance timeout to rejoin; the join
    // completes earlier when they all have (maybe_complete_join).
    g.initial_delay = false;
    schedule_join(g, g.max_rebalance_timeout_ms());
  }
  transition(g, GroupState::preparing_rebalance);
  // Kafka's DelayedJoin is tried at once: a rebalance nobody needs to rejoin
  // (the last member left, the only member rejoined) completes now.
  maybe_complete_join(g);
}

void GroupMetadataManager::maybe_complete_join(Group& g) {
  if (g.state == GroupState::preparing_rebalance && !g.initial_delay && g.has_all_members_joined()) complete_join(g);
}

void GroupMetadataManager::complete_join(Group& g) {
  timer_.cancel(join_key(g.id));
  // Dynamic members that did not rejoin in time leave; static ones stay
  // until their session times out (KIP-345).
  std::vector<std::string> gone;
  for (auto& [id, m] : g.members)
    if (!m.is_awaiting_join() && !m.group_instance_id) gone.push_back(id);
  for (auto& id : gone) remove_member(g, id);

  if (!g.members.empty() && (!g.leader_id || !g.has(*g.leader_id) || !g.members.at(*g.leader_id).is_awaiting_join())) {
    const Member* best = nullptr;
    for (auto& [id, m] : g.members)
      if (m.is_awaiting_join() && (!best || m.join_order < best->join_order)) best = &m;
    if (best) g.leader_id = best->member_id;
  }
  ++g.generation;
  g.initial_delay = false;
  if (g.members.empty()) {
    g.protocol_name.reset();
    g.leader_id.reset();
    transition(g, GroupState::empty);
    RLOG_INFO("Group %s with generation %d is now empty (__consumer_offsets-%d)", g.id.c_str(), g.generation,
              g.partition);
    store_group(g, [](std::error_code) {});
    return;
  }
  g.protocol_name = g.select_protocol();
  transition(g, GroupState::completing_rebalance);
  RLOG_INFO("Stabilized group %s generation %d (__consumer_offsets-%d) with %zu members", g.id.c_str(), g.generation,
            g.partition, g.members.size());
  // Every member owes a SyncGroup within the rebalance timeout.
  for (auto& [id, m] : g.members) g.pending_sync.insert(id);
  timer_.schedule(sync_key(g.id), now() + g.max_rebalance_timeout_ms(),
                  [this, id = g.id] { expire_pending_sync(id); });
  std::vector<std::pair<JoinCallback, JoinResult>> answers;
  for (auto& [id, m] : g.members) {
    if (!m.is_awaiting_join()) continue;
    answers.emplace_back(std::exchange(m.awaiting_join, {}), current_join_result(g, m, g.is_leader(id), false));
    schedule_heartbeat(g, m);
  }
  for (auto& [cb, result] : answers) cb(std::move(result));
}

JoinResult GroupMetadataManager::current_join_result(const Group& g, const Member& m, bool include_members,
                                                 bool skip_assignment) const {
  JoinResult r;
  r.generation = g.generation;
  r.protocol_type = g.protocol_type;
  r.protocol_name = g.protocol_name;
  r.leader = g.leader_id.value_or("");
  r.member_id = m.member_id;
  r.skip_assignment = skip_assignment;
  if (include_members && g.protocol_name) {
    std::vector<const Member*> ordered;
    for (auto& [id, other] : g.members) ordered.push_back(&other);
    std::sort(ordered.begin(), ordered.end(), [](auto* a, auto* b) { return a->join_order < b->join_order; });
    for (auto* other : ordered) {
      const Bytes* md = other->metadata(*g.protocol_name);
      r.members.push_back({other->member_id, other->group_instance_id, md ? *md : Bytes{}});
    }
  }
  return r;
}

// ---- timers ----

void GroupMetadataManager::schedule_heartbeat(const Group& g, const Member& m) {
  timer_.schedule(heartbeat_key(g.id, m.member_id), now() + m.session_timeout_ms,
                  [this, group = g.id, member = m.member_id] { expire_heartbeat(group, member); });
}

// Kafka's onClassicGroupMemberHeartbeatExpired: the member's session ran out.
void GroupMetadataManager::expire_heartbeat(const std::string& group_id, const std::string& member_id) {
  Group* g = find_mutable(group_id);
  if (!g) return;
  auto it = g->members.find(member_id);
  if (it == g->members.end()) return;
  // A member whose JoinGroup or SyncGroup is parked cannot heartbeat; its
  // session starts again when it is answered.
  if (it->second.is_awaiting_join() || it->second.is_awaiting_sync()) return schedule_heartbeat(*g, it->second);
  remove_member_and_update_group(*g, member_id, "session timeout expired");
}

// KIP-394: a member id handed out with MEMBER_ID_REQUIRED that did not come
// back within the session timeout.
void GroupMetadataManager::expire_pending_member(const std::string& group_id, const std::string& member_id) {
  if (Group* g = find_mutable(group_id); g && g->pending_members.count(member_id)) remove_pending_member(*g, member_id);
}

void GroupMetadataManager::schedule_join(const Group& g, int32_t delay_ms) {
  timer_.schedule(join_key(g.id), now() + delay_ms, [this, id = g.id] { join_deadline(id); });
}

// The rebalance timeout or the initial delay is over. An initial delay is
// extended by group.initial.rebalance.delay.ms while members keep arriving,
// up to the rebalance timeout (Kafka's InitialDelayedJoin).
void GroupMetadataManager::join_deadline(const std::string& group_id) {
  Group* g = find_mutable(group_id);
  if (!g || g->state != GroupState::preparing_rebalance) return;
  if (g->initial_delay && g->new_member_added && g->initial_remaining_ms > 0) {
    g->new_member_added = false;
    int32_t delay = std::min(config_.initial_rebalance_delay_ms, g->initial_remaining_ms);
    g->initial_remaining_ms = std::max(g->initial_remaining_ms - config_.initial_rebalance_delay_ms, 0);
    return schedule_join(*g, delay);
  }
  g->new_member_added = false;
  complete_join(*g);
}

// Kafka's expirePendingSync: members that joined the generation but sent no
// SyncGroup within the rebalance timeout are removed, and the group
// rebalances without them.
void GroupMetadataManager::expire_pending_sync(const std::string& group_id) {
  Group* gp = find_mutable(group_id);
  if (!gp) return;
  Group& g = *gp;
  if (g.state != GroupState::completing_rebalance && g.state != GroupState::stable) return;
  if (g.pending_sync.empty()) return;
  std::vector<std::string> gone(g.pending_sync.begin(), g.pending_sync.end());
  for (auto& id : gone) remove_member(g, id);
  prepare_rebalance(g, "members removed on pending sync request expiration");
}

void GroupMetadataManager::remove_member(Group& g, const std::string& member_id) {
  auto it = g.members.find(member_id);
  if (it == g.members.end()) return;
  if (it->second.group_instance_id) {
    auto s = g.static_members.find(*it->second.group_instance_id);
    if (s != g.static_members.end() && s->second == member_id) g.static_members.erase(s);
  }
  timer_.cancel(heartbeat_key(g.id, member_id));
  g.members.erase(it);
  g.pending_sync.erase(member_id);
  if (g.leader_id == member_id) {
    g.leader_id.reset();
    const Member* best = nullptr;
    for (auto& [id, m] : g.members)
      if (!best || m.join_order < best->join_order) best = &m;
    if (best) g.leader_id = best->member_id;
  }
}

void GroupMetadataManager::remove_member_and_update_group(Group& g, const std::string& member_id, const std::string& reason) {
  auto it = g.members.find(member_id);
  if (it == g.members.end()) return;
  JoinCallback join_cb = std::exchange(it->second.awaiting_join, {});
  SyncCallback sync_cb = std::exchange(it->second.awaiting_sync, {});
  remove_member(g, member_id);
  if (join_cb) join_cb(join_error("", ErrorCode::unknown_member_id));
  if (sync_cb) sync_cb(sync_error(ErrorCode::unknown_member_id));
  switch (g.state) {
    case GroupState::stable:
    case GroupState::completing_rebalance: maybe_prepare_rebalance(g, reason); break;
    case GroupState::preparing_rebalance: maybe_complete_join(g); break;
    default: break;
  }
}

void GroupMetadataManager::remove_pending_member(Group& g, const std::string& member_id) {
  timer_.cancel(heartbeat_key(g.id, member_id));
  g.pending_members.erase(member_id);
  maybe_complete_join(g);
}

// ---- SyncGroup ----

void GroupMetadataManager::sync(SyncRequest req, SyncCallback done) {
  if (!owns(partition_for(req.group_id))) return done(sync_error(ErrorCode::not_coordinator));
  // A loading coordinator makes the member rejoin (Kafka answers REBALANCE_IN_PROGRESS).
  if (is_loading(partition_for(req.group_id))) return done(sync_error(ErrorCode::rebalance_in_progress));
  Group* gp = find_mutable(req.group_id);
  if (!gp) return done(sync_error(ErrorCode::unknown_member_id));
  Group& g = *gp;
  if (g.state == GroupState::dead) return done(sync_error(ErrorCode::coordinator_not_available));
  if (ErrorCode e = g.validate_member(req.member_id, req.group_instance_id); e != ErrorCode::none)
    return done(sync_error(e));
  if (req.generation != g.generation) return done(sync_error(ErrorCode::illegal_generation));
  if ((req.protocol_type && req.protocol_type != g.protocol_type) ||
      (req.protocol_name && req.protocol_name != g.protocol_name))
    return done(sync_error(ErrorCode::inconsistent_group_protocol));
  Member& m = g.members.at(req.member_id);
  if (g.pending_sync.erase(req.member_id) && g.pending_sync.empty()) timer_.cancel(sync_key(g.id));
  switch (g.state) {
    case GroupState::empty: return done(sync_error(ErrorCode::unknown_member_id));
    case GroupState::preparing_rebalance: return done(sync_error(ErrorCode::rebalance_in_progress));
    case GroupState::stable: {
      schedule_heartbeat(g, m);
      SyncResult r;
      r.protocol_type = g.protocol_type;
      r.protocol_name = g.protocol_name;
      r.assignment = m.assignment;
      return done(std::move(r));
    }
    case GroupState::completing_rebalance: break;
    default: return done(sync_error(ErrorCode::unknown_member_id));
  }
  if (m.awaiting_sync) std::exchange(m.awaiting_sync, {})(sync_error(ErrorCode::rebalance_in_progress));
  m.awaiting_sync = std::move(done);
  schedule_heartbeat(g, m);
  if (!g.is_leader(req.member_id)) return;

  // The leader's assignment: members it left out get an empty one.
  std::map<std::string, Bytes> given;
  for (auto& [id, a] : req.assignments) given[id] = a;
  for (auto& [id, member] : g.members) {
    auto it = given.find(id);
    member.assignment = it == given.end() ? Bytes{} : it->second;
  }
  // The assignment is answered once it is stored, and only if the group
  // is still in this generation's CompletingRebalance by then (Kafka's
  // doSyncGroup callback): a rebalance meanwhile has answered the members.
  store_group(g, [this, group_id = g.id, generation = g.generation](std::error_code ec) {
    Group* g = find_mutable(group_id);
    if (!g || g->state != GroupState::completing_rebalance || g->generation != generation) return;
    if (ec) {
      reset_and_propagate_assignment_error(*g, ErrorCode::coordinator_not_available);
      maybe_prepare_rebalance(*g, "storing the group failed");
      return;
    }
    propagate_assignment(*g, ErrorCode::none);
    transition(*g, GroupState::stable);
  });
}

void GroupMetadataManager::propagate_assignment(Group& g, ErrorCode error) {
  std::vector<std::pair<SyncCallback, SyncResult>> answers;
  for (auto& [id, m] : g.members) {
    if (!m.is_awaiting_sync()) continue;
    SyncResult r;
    r.error = error;
    r.protocol_type = g.protocol_type;
    r.protocol_name = g.protocol_name;
    if (error == ErrorCode::none) r.assignment = m.assignment;
    answers.emplace_back(std::exchange(m.awaiting_sync, {}), std::move(r));
    schedule_heartbeat(g, m);
  }
  for (auto& [cb, r] : answers) cb(std::move(r));
}

void GroupMetadataManager::reset_and_propagate_assignment_error(Group& g, ErrorCode error) {
  for (auto& [id, m] : g.members) m.assignment.clear();
  propagate_assignment(g, error);
}

void GroupMetadataManager::store_group(Group& g, AppendDone done) {
  GroupMetadataValue v;
  v.protocol_type = g.protocol_type.value_or("");
  v.generation = g.generation;
  v.protocol = g.protocol_name;
  v.leader = g.leader_id;
  v.current_state_timestamp = g.current_state_timestamp;
  for (auto& [id, m] : g.members) {
    GroupMemberRecord r;
    r.member_id = id;
    r.group_instance_id = m.group_instance_id;
    r.client_id = m.client_id;
    r.client_host = m.client_host;
    r.rebalance_timeout = m.rebalance_timeout_ms;
    r.session_timeout = m.session_timeout_ms;
    if (g.protocol_name)
      if (const Bytes* md = m.metadata(*g.protocol_name)) r.subscription = *md;
    r.assignment = m.assignment;
    v.members.push_back(std::move(r));
  }
  store_.append(g.partition, {OffsetsRecord{encode_key(GroupMetadataKey{g.id}), encode_value(v)}}, std::move(done));
}

// ---- Heartbeat and LeaveGroup ----

ErrorCode GroupMetadataManager::heartbeat(const std::string& group_id, const std::string& member_id,
                                      const std::optional<std::string>& group_instance_id, int32_t generation) {
  if (!owns(partition_for(group_id))) return ErrorCode::not_coordinator;
  // Kafka answers blindly while loading: the member will learn soon enough.
  if (is_loading(partition_for(group_id))) return ErrorCode::none;
  Group* g = find_mutable(group_id);
  if (!g) return ErrorCode::unknown_member_id;
  if (g->state == GroupState::dead) return ErrorCode::coordinator_not_available;
  if (ErrorCode e = g->validate_member(member_id, group_instance_id); e != ErrorCode::none) return e;
  if (generation != g->generation) return ErrorCode::illegal_generation;
  schedule_heartbeat(*g, g->members.at(member_id));
  if (g->state == GroupState::preparing_rebalance) return ErrorCode::rebalance_in_progress;
  return ErrorCode::none;
}

LeaveResult GroupMetadataManager::leave(const std::string& group_id, const std::vector<LeaveMember>& members) {
  LeaveResult r;
  if (!owns(partition_for(group_id))) {
    r.error = ErrorCode::not_coordinator;
    return r;
  }
  if (is_loading(partition_for(group_id))) {
    r.error = ErrorCode::coordinator_load_in_progress;
    return r;
  }
  Group* g = find_mutable(group_id);
  if (!g) {
    r.members.assign(members.size(), ErrorCode::unknown_member_id);
    return r;
  }
  if (g->state == GroupState::dead) {
    r.error = ErrorCode::coordinator_not_available;
    return r;
  }
  for (const auto& lm : members) {
    ErrorCode e = ErrorCode::none;
    if (lm.member_id.empty()) {
      // Administrative removal by group.instance.id.
      auto it = lm.group_instance_id ? g->static_members.find(*lm.group_instance_id) : g->static_members.end();
      if (it == g->static_members.end()) e = ErrorCode::unknown_member_id;
      else remove_member_and_update_group(*g, std::string(it->second), "removed by instance id");
    } else if (g->pending_members.count(lm.member_id)) {
      remove_pending_member(*g, lm.member_id);
    } else if (e = g->validate_member(lm.member_id, lm.group_instance_id); e == ErrorCode::none) {
      remove_member_and_update_group(*g, lm.member_id, "member left");
    }
    r.members.push_back(e);
  }
  return r;
}

// ---- listing and describing ----

ErrorCode GroupMetadataManager::list_groups(std::vector<GroupListing>& out) const {
  // Only the groups of the partitions owned (the only ones in memory).
  if (!loading_.empty()) return ErrorCode::coordinator_load_in_progress;
  for (auto& [id, g] : groups_)
    if (owns(g->partition)) out.push_back({id, g->protocol_type.value_or(""), state_name(g->state)});
  return ErrorCode::none;
}

GroupDescription GroupMetadataManager::describe(const std::string& group_id) const {
  GroupDescription d;
  d.group_id = group_id;
  if (!owns(partition_for(group_id))) {
    d.error = ErrorCode::not_coordinator;
    return d;
  }
  if (is_loading(partition_for(group_id))) {
    d.error = ErrorCode::coordinator_load_in_progress;
    return d;
  }
  const Group* g = find(group_id);
  if (!g) {
    d.state = state_name(GroupState::dead);
    d.error = ErrorCode::group_id_not_found;  // the handler reports it from v6 on
    return d;
  }
  d.state = state_name(g->state);
  d.protocol_type = g->protocol_type.value_or("");
  const bool stable = g->state == GroupState::stable;
  if (stable) d.protocol_data = g->protocol_name.value_or("");
  if (g->state == GroupState::dead) return d;
  std::vector<const Member*> ordered;
  for (auto& [id, m] : g->members) ordered.push_back(&m);
  std::sort(ordered.begin(), ordered.end(), [](auto* a, auto* b) { return a->join_order < b->join_order; });
  for (auto* m : ordered) {
    GroupDescription::DescribedMember dm{m->member_id, m->group_instance_id, m->client_id, m->client_host, {}, {}};
    if (stable && g->protocol_name) {
      if (const Bytes* md = m->metadata(*g->protocol_name)) dm.metadata = *md;
      dm.assignment = m->assignment;
    }
    d.members.push_back(std::move(dm));
  }
  return d;
}

std::vector<std::string> GroupMetadataManager::group_ids() const {
  std::vector<std::string> ids;
  for (auto& [id, g] : groups_) ids.push_back(id);
  return ids;
}

OffsetsRecord GroupMetadataManager::group_tombstone(const Group& g) {
  return {encode_key(GroupMetadataKey{g.id}), std::nullopt};
}

void GroupMetadataManager::remove_group(Group& g) {
  transition(g, GroupState::dead);
  drop_group(g.id);
}

}  // namespace runnel::broker::group
