#include "broker/group/consumer/consumer_group_manager.h"

#include <re2/re2.h>

#include <algorithm>
#include <set>
#include <utility>

#include "broker/coordinator_append_error.h"
#include "broker/group/consumer/consumer_group_records.h"
#include "broker/group/consumer/current_assignment_builder.h"
#include "storage/uuid_text.h"

namespace runnel::broker::group::consumer {

namespace {

// Kafka's Topic.isInternal: a regex never subscribes to these.
bool is_internal_topic(const std::string& name) {
  return name == "__consumer_offsets" || name == "__transaction_state" || name == "__share_group_state";
}

ConsumerHeartbeatResult failure(ErrorCode error, std::string message = {}) {
  ConsumerHeartbeatResult r;
  r.error = error;
  if (!message.empty()) r.error_message = std::move(message);
  return r;
}

std::string session_key(const std::string& group_id, const std::string& member_id) {
  return "session-timeout-" + group_id + "-" + member_id;
}

constexpr size_t kRegexCacheSize = 256;

std::string rebalance_key(const std::string& group_id, const std::string& member_id) {
  return "rebalance-timeout-" + group_id + "-" + member_id;
}

// Kafka's isSubset: every owned partition is assigned; a heartbeat that did
// not list its partitions proves nothing.
bool owned_within(const std::optional<Assignment>& owned, const Assignment& assigned) {
  if (!owned) return false;
  for (const auto& [topic, partitions] : *owned) {
    auto it = assigned.find(topic);
    for (int32_t p : partitions)
      if (it == assigned.end() || !it->second.contains(p)) return false;
  }
  return true;
}

// The fields ConsumerGroupMemberMetadata holds.
bool same_subscription_record(const ConsumerGroupMember& a, const ConsumerGroupMember& b) {
  return a.instance_id == b.instance_id && a.rack_id == b.rack_id && a.client_id == b.client_id &&
         a.client_host == b.client_host && a.subscribed_topic_names == b.subscribed_topic_names &&
         a.subscribed_topic_regex == b.subscribed_topic_regex && a.rebalance_timeout_ms == b.rebalance_timeout_ms &&
         a.server_assignor == b.server_assignor;
}

// The fields ConsumerGroupCurrentMemberAssignment holds.
bool same_current_assignment(const ConsumerGroupMember& a, const ConsumerGroupMember& b) {
  return a.member_epoch == b.member_epoch && a.previous_member_epoch == b.previous_member_epoch &&
         a.state == b.state && a.assigned_partitions == b.assigned_partitions &&
         a.partitions_pending_revocation == b.partitions_pending_revocation;
}

std::optional<std::string> empty_is_null(const std::optional<std::string>& s) {
  if (!s || s->empty()) return std::nullopt;
  return s;
}

}  // namespace

struct ConsumerGroupManager::Resolved {
  std::set<TopicId> ids;
  SubscribedTopics topics;
};

ConsumerGroupManager::ConsumerGroupManager(const ConsumerGroupConfig& config, OffsetsStore& store, const Clock& clock,
                                           CoordinatorTimer& timer, const TopicsImage& topics,
                                           std::function<int32_t(const std::string&)> partition_for,
                                           std::function<bool(const std::string&)> is_classic_group,
                                           std::function<bool(int32_t)> serves)
    : config_(config),
      store_(store),
      clock_(clock),
      timer_(timer),
      topics_(topics),
      partition_for_(std::move(partition_for)),
      is_classic_group_(std::move(is_classic_group)),
      serves_(std::move(serves)) {
  for (const std::string& name : config_.assignors)
    if (auto a = make_assignor(name)) assignors_.push_back(std::move(a));
  if (assignors_.empty()) assignors_.push_back(make_assignor("uniform"));
}

ConsumerGroupManager::~ConsumerGroupManager() = default;

const ConsumerGroup* ConsumerGroupManager::find(const std::string& group_id) const {
  auto it = groups_.find(group_id);
  return it == groups_.end() ? nullptr : &it->second;
}

std::string_view ConsumerGroupManager::assignor_name(const ConsumerGroup& g) const {
  std::map<std::string, const ConsumerGroupMember*> members;
  for (const auto& [id, m] : g.members) members[id] = &m;
  return assignor_for(members).name();
}

bool ConsumerGroupManager::replay(protocol::ByteView key, const std::optional<protocol::ByteView>& value) {
  return consumer::replay(groups_, key, value);
}

void ConsumerGroupManager::loaded(const std::function<bool(int32_t)>& which) {
  for (const auto& [group_id, g] : groups_) {
    if (!which(partition_for_(group_id))) continue;
    for (const auto& [member_id, m] : g.members) {
      schedule_session(group_id, member_id);
      if (m.state == MemberState::unrevoked_partitions) schedule_rebalance_timeout(group_id, m);
    }
  }
}

void ConsumerGroupManager::unload(const std::function<bool(int32_t)>& which) {
  ++unloads_;
  for (auto it = groups_.begin(); it != groups_.end();) {
    if (!which(partition_for_(it->first))) {
      ++it;
      continue;
    }
    for (const auto& [member_id, m] : it->second.members) cancel_timers(it->first, member_id);
    subscribed_partitions_.erase(it->first);
    it = groups_.erase(it);
  }
}

// --- one operation per group at a time --------------------------------------

void ConsumerGroupManager::run_exclusive(const std::string& group_id, std::function<void()> op) {
  queues_[group_id].ops.push_back(std::move(op));
  drain(group_id);
}

void ConsumerGroupManager::finish(const std::string& group_id) {
  auto it = queues_.find(group_id);
  if (it == queues_.end()) return;
  it->second.running = false;
  drain(group_id);
}

// A loop, not a recursion: an operation that completes at once (nothing to
// write) finishes inside op(), and the loop starts the next, so a backlog
// of heartbeats behind a slow write drains in constant stack.
void ConsumerGroupManager::drain(const std::string& group_id) {
  auto it = queues_.find(group_id);
  if (it == queues_.end() || it->second.draining) return;
  Queue& q = it->second;
  q.draining = true;
  while (!q.running && !q.ops.empty()) {
    auto op = std::move(q.ops.front());
    q.ops.pop_front();
    q.running = true;
    op();
  }
  q.draining = false;
  if (!q.running && q.ops.empty()) queues_.erase(it);
}

void ConsumerGroupManager::write(const std::string& group_id, std::vector<OffsetsRecord> records,
                                 std::function<void(ErrorCode)> then) {
  if (records.empty()) return then(ErrorCode::none);
  std::vector<OffsetsRecord> stored = records;
  const uint64_t unloads = unloads_;
  store_.write(partition_for_(group_id), std::move(stored), std::nullopt,
               [this, group_id, unloads, records = std::move(records), then = std::move(then)](Written w) {
                 if (w.error != ErrorCode::none) return then(coordinator_append_error(w.error));
                 // Unloaded meanwhile: the next coordinator loads it from the log.
                 if (unloads != unloads_ && !groups_.contains(group_id)) return then(ErrorCode::not_coordinator);
                 for (const OffsetsRecord& r : records) {
                   std::optional<protocol::ByteView> value;
                   if (r.value) value = protocol::ByteView(*r.value);
                   replay(r.key, value);
                 }
                 then(ErrorCode::none);
               });
}

// --- ConsumerGroupHeartbeat ---------------------------------------------------

void ConsumerGroupManager::heartbeat(ConsumerHeartbeat req, HeartbeatDone done) {
  // Kafka's throwIfConsumerGroupHeartbeatRequestIsInvalid.
  const auto invalid = [&](std::string why) { done(failure(ErrorCode::invalid_request, std::move(why))); };
  if (req.group_id.empty()) return invalid("GroupId can't be empty.");
  if (req.instance_id && req.instance_id->empty()) return invalid("InstanceId can't be empty.");
  if (req.rack_id && req.rack_id->empty()) return invalid("RackId can't be empty.");
  // v1 (KIP-1082): the client names itself; v0 is given an id on joining.
  if (req.api_version >= 1 && req.member_id.empty()) return invalid("MemberId can't be empty.");
  if (req.member_epoch > 0 || req.member_epoch == kLeaveGroupMemberEpoch) {
    if (req.member_id.empty()) return invalid("MemberId can't be empty.");
  } else if (req.member_epoch == 0) {
    if (req.rebalance_timeout_ms == -1) return invalid("RebalanceTimeoutMs must be provided in first request.");
    if (!req.owned || !req.owned->empty()) return invalid("TopicPartitions must be empty when (re-)joining.");
    if (!req.subscribed_topic_names && !req.subscribed_topic_regex)
      return invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.");
  } else if (req.member_epoch == kLeaveGroupStaticMemberEpoch) {
    if (!req.instance_id) return invalid("InstanceId can't be null.");
  } else {
    return invalid("MemberEpoch is invalid.");
  }
  if (req.subscribed_topic_regex && !req.subscribed_topic_regex->empty()) {
    re2::RE2::Options options;
    options.set_log_errors(false);
    re2::RE2 re(*req.subscribed_topic_regex, options);  // not cached: a refused pattern is not kept
    if (!re.ok())
      return done(failure(ErrorCode::invalid_regular_expression, "SubscribedTopicRegex `" +
                                                                     *req.subscribed_topic_regex +
                                                                     "` is not a valid regular expression: " +
                                                                     re.error() + "."));
  }
  if (req.server_assignor &&
      std::none_of(assignors_.begin(), assignors_.end(), [&](const auto& a) { return a->name() == *req.server_assignor; })) {
    std::string supported;
    for (const auto& a : assignors_) supported += (supported.empty() ? "" : ", ") + std::string(a->name());
    return done(failure(ErrorCode::unsupported_assignor,
                        "ServerAssignor " + *req.server_assignor + " is not supported. Supported assignors: " +
                            supported + "."));
  }
  if (req.member_id.empty()) req.member_id = storage::uuid_to_base64(storage::random_uuid());

  const std::string group_id = req.group_id;
  run_exclusive(group_id, [this, req = std::move(req), done = std::move(done)]() {
    auto finished = [this, group_id = req.group_id, done](ConsumerHeartbeatResult r) {
      done(std::move(r));
      finish(group_id);
    };
    // Its partition was unloaded while it waited its turn.
    if (!serves_(partition_for_(req.group_id))) return finished(failure(ErrorCode::not_coordinator));
    if (req.member_epoch == kLeaveGroupMemberEpoch || req.member_epoch == kLeaveGroupStaticMemberEpoch)
      leave(req, std::move(finished));
    else
      join_or_heartbeat(req, std::move(finished));
  });
}

void ConsumerGroupManager::join_or_heartbeat(const ConsumerHeartbeat& req, HeartbeatDone done) {
  const std::string& group_id = req.group_id;
  auto git = groups_.find(group_id);
  if (git == groups_.end() && req.member_epoch != 0)
    return done(failure(ErrorCode::group_id_not_found, "Consumer group " + group_id + " not found."));
  if (is_classic_group_ && is_classic_group_(group_id))
    return done(failure(ErrorCode::group_id_not_found, "Group " + group_id + " is not a consumer group."));
  ConsumerGroup fresh;
  fresh.group_id = group_id;
  const ConsumerGroup& g = git == groups_.end() ? fresh : git->second;

  // The member as the group knows it, a static member whose place it takes,
  // or a new one.
  std::vector<OffsetsRecord> records;
  const ConsumerGroupMember* known = nullptr;
  const ConsumerGroupMember* replaced = nullptr;
  if (auto it = g.members.find(req.member_id); it != g.members.end()) known = &it->second;
  if (req.member_epoch == 0 && req.instance_id) {
    const ConsumerGroupMember* holder = g.static_member(*req.instance_id);
    if (holder && holder->member_id != req.member_id) {
      if (holder->member_epoch != kLeaveGroupStaticMemberEpoch)
        return done(failure(ErrorCode::unreleased_instance_id, "Static member " + holder->member_id +
                                                                   " with instance id " + *req.instance_id +
                                                                   " is not released yet."));
      replaced = holder;
    }
  }
  if (req.member_epoch > 0) {
    if (!known)
      return done(failure(ErrorCode::unknown_member_id,
                          "Member " + req.member_id + " is not a member of group " + group_id + "."));
    // Kafka's throwIfMemberEpochIsInvalid: the previous epoch is accepted
    // from a member whose answer was lost, if it owns nothing it should not.
    if (req.member_epoch > known->member_epoch)
      return done(failure(ErrorCode::fenced_member_epoch,
                          "The consumer group member has a greater epoch (" + std::to_string(req.member_epoch) +
                              ") than the one known by the group coordinator (" +
                              std::to_string(known->member_epoch) +
                              "). The member must abandon all its partitions and rejoin."));
    if (req.member_epoch < known->member_epoch &&
        (req.member_epoch != known->previous_member_epoch || !owned_within(req.owned, known->assigned_partitions)))
      return done(failure(ErrorCode::fenced_member_epoch,
                          "The consumer group member has a smaller member epoch (" +
                              std::to_string(req.member_epoch) + ") than the one known by the group coordinator (" +
                              std::to_string(known->member_epoch) +
                              "). The member must abandon all its partitions and rejoin."));
  }
  const bool is_new = !known && !replaced;
  if (is_new && static_cast<int64_t>(g.members.size()) >= config_.max_size)
    return done(failure(ErrorCode::group_max_size_reached, "The consumer group has reached its maximum capacity of " +
                                                               std::to_string(config_.max_size) + " members."));

  ConsumerGroupMember before;
  if (known) {
    before = *known;
  } else if (replaced) {
    // The new instance takes over the old one's epoch and assignment: no
    // rebalance (KIP-848's static membership).
    before = *replaced;
    before.member_id = req.member_id;
    records.push_back(current_assignment_tombstone(group_id, replaced->member_id));
    records.push_back(target_member_tombstone(group_id, replaced->member_id));
    records.push_back(subscription_tombstone(group_id, replaced->member_id));
  } else {
    before.member_id = req.member_id;
  }

  ConsumerGroupMember m = before;
  if (req.instance_id) m.instance_id = req.instance_id;
  if (req.rack_id) m.rack_id = req.rack_id;
  if (req.rebalance_timeout_ms != -1) m.rebalance_timeout_ms = req.rebalance_timeout_ms;
  if (req.server_assignor) m.server_assignor = empty_is_null(req.server_assignor);
  if (req.subscribed_topic_names) {
    std::vector<std::string> names = *req.subscribed_topic_names;
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    m.subscribed_topic_names = std::move(names);
  }
  if (req.subscribed_topic_regex) m.subscribed_topic_regex = empty_is_null(req.subscribed_topic_regex);
  m.client_id = req.client_id;
  m.client_host = req.client_host;
  const bool subscription_changed = m.subscribed_topic_names != before.subscribed_topic_names ||
                                    m.subscribed_topic_regex != before.subscribed_topic_regex;
  if (!known || !same_subscription_record(m, before)) records.push_back(subscription_record(group_id, m));

  // The group as it will be: this member in, a replaced one out.
  std::map<std::string, const ConsumerGroupMember*> members;
  for (const auto& [id, other] : g.members)
    if (!replaced || id != replaced->member_id) members[id] = &other;
  members[m.member_id] = &m;
  std::map<std::string, Resolved> resolved;
  std::map<TopicId, int32_t> subscribed_partitions;
  SubscribedTopics topics;
  for (const auto& [id, member] : members) {
    Resolved r = resolve(*member);
    for (const auto& [topic, info] : r.topics) {
      subscribed_partitions[topic] = info.partitions;
      topics[topic] = info;
    }
    resolved[id] = std::move(r);
  }

  // The group epoch moves with membership, subscriptions and the subscribed
  // topics' partitions (after a load the latter are unknown, so it moves
  // once then too).
  auto sp = subscribed_partitions_.find(group_id);
  const bool topics_changed = sp == subscribed_partitions_.end() ? !subscribed_partitions.empty()
                                                                 : sp->second != subscribed_partitions;
  const bool bump = is_new || subscription_changed || topics_changed;
  const int32_t group_epoch = bump ? g.group_epoch + 1 : g.group_epoch;
  if (bump) records.push_back(group_epoch_record(group_id, group_epoch, 0));

  // The target assignment, recomputed when the group epoch passed it.
  std::map<std::string, Assignment> target;
  for (const auto& [id, a] : g.target)
    if (!replaced || id != replaced->member_id) target[id] = a;
  if (replaced) target[m.member_id] = g.target_of(replaced->member_id);
  int32_t target_epoch = g.assignment_epoch;
  if (group_epoch > g.assignment_epoch) {
    GroupSpec spec;
    for (const auto& [id, member] : members) {
      MemberSubscription& s = spec.members[id];
      s.instance_id = member->instance_id;
      s.rack_id = member->rack_id;
      s.subscribed_topic_ids = resolved[id].ids;
      if (auto t = target.find(id); t != target.end()) s.target = t->second;
    }
    GroupAssignment next = assignor_for(members).assign(spec, topics);
    for (const auto& [id, a] : next) {
      // A replacing static member's target is under a new id: written
      // even when the assignor gives it the same partitions.
      auto t = target.find(id);
      if (t == target.end() || t->second != a || (replaced && id == m.member_id))
        records.push_back(target_member_record(group_id, id, a));
    }
    records.push_back(target_epoch_record(group_id, group_epoch));
    target = std::move(next);
    target_epoch = group_epoch;
  } else if (replaced) {
    records.push_back(target_member_record(group_id, m.member_id, target[m.member_id]));
  }

  // One reconciliation step towards the member's target.
  Reconciliation step;
  step.target_epoch = target_epoch;
  step.target = &target[m.member_id];
  step.subscribed = &resolved[m.member_id].ids;
  step.current_partition_epoch = [&g](const TopicId& t, int32_t p) { return g.partition_epoch(t, p); };
  step.owned = &req.owned;
  step.subscription_changed = subscription_changed;
  ReconcileResult reconciled = reconcile(m, step);
  if (reconciled.error != ErrorCode::none)
    return done(failure(reconciled.error, "The consumer group member is in a unknown state. "
                                          "The member must abandon all its partitions and rejoin."));
  const ConsumerGroupMember& after = reconciled.member;
  if (!known || !same_current_assignment(after, before)) records.push_back(current_assignment_record(group_id, after));

  const bool full_request = req.rebalance_timeout_ms != -1 &&
                            (req.subscribed_topic_names || req.subscribed_topic_regex) && req.owned.has_value();
  ConsumerHeartbeatResult result;
  result.member_id = after.member_id;
  result.member_epoch = after.member_epoch;
  result.heartbeat_interval_ms = config_.heartbeat_interval_ms;
  if (req.member_epoch == 0 || full_request || after.assigned_partitions != before.assigned_partitions)
    result.assignment = after.assigned_partitions;
  const bool entered_revocation = after.state == MemberState::unrevoked_partitions &&
                                  (before.state != MemberState::unrevoked_partitions ||
                                   before.member_epoch != after.member_epoch || !known);
  const bool target_recomputed = target_epoch != g.assignment_epoch;

  write(group_id, std::move(records),
        [this, group_id, member = after, result = std::move(result), entered_revocation, target_recomputed,
         subscribed_partitions = std::move(subscribed_partitions), replaced_id = replaced ? replaced->member_id : "",
         done = std::move(done)](ErrorCode e) mutable {
          if (e != ErrorCode::none) return done(failure(e));
          if (target_recomputed) subscribed_partitions_[group_id] = std::move(subscribed_partitions);
          if (!replaced_id.empty()) cancel_timers(group_id, replaced_id);
          schedule_session(group_id, member.member_id);
          if (entered_revocation) schedule_rebalance_timeout(group_id, member);
          else if (member.state != MemberState::unrevoked_partitions) timer_.cancel(rebalance_key(group_id, member.member_id));
          done(std::move(result));
        });
}

void ConsumerGroupManager::leave(const ConsumerHeartbeat& req, HeartbeatDone done) {
  const std::string& group_id = req.group_id;
  auto git = groups_.find(group_id);
  if (git == groups_.end())
    return done(failure(ErrorCode::group_id_not_found, "Consumer group " + group_id + " not found."));
  const ConsumerGroup& g = git->second;
  auto mit = g.members.find(req.member_id);
  if (mit == g.members.end())
    return done(failure(ErrorCode::unknown_member_id,
                        "Member " + req.member_id + " is not a member of group " + group_id + "."));
  ConsumerHeartbeatResult result;
  result.member_id = req.member_id;
  result.member_epoch = req.member_epoch;
  if (req.member_epoch == kLeaveGroupStaticMemberEpoch) {
    // A static member leaves for now: it keeps its assignment at epoch -2
    // until it rejoins under its instance id or its session expires.
    ConsumerGroupMember leaving = mit->second;
    leaving.member_epoch = kLeaveGroupStaticMemberEpoch;
    leaving.partitions_pending_revocation.clear();
    return write(group_id, {current_assignment_record(group_id, leaving)},
                 [this, group_id, member_id = req.member_id, result, done = std::move(done)](ErrorCode e) {
                   if (e != ErrorCode::none) return done(failure(e));
                   timer_.cancel(rebalance_key(group_id, member_id));
                   done(result);
                 });
  }
  write(group_id, removal_records(g, req.member_id),
        [this, group_id, member_id = req.member_id, result, done = std::move(done)](ErrorCode e) {
          if (e != ErrorCode::none) return done(failure(e));
          cancel_timers(group_id, member_id);
          done(result);
        });
}

void ConsumerGroupManager::delete_group(const std::string& group_id, std::function<void(ErrorCode)> done) {
  run_exclusive(group_id, [this, group_id, done = std::move(done)] {
    auto finished = [this, group_id, done](ErrorCode e) {
      done(e);
      finish(group_id);
    };
    const ConsumerGroup* g = find(group_id);
    if (!g) return finished(ErrorCode::group_id_not_found);
    if (!g->members.empty()) return finished(ErrorCode::non_empty_group);
    write(group_id, {target_epoch_tombstone(group_id), group_epoch_tombstone(group_id)},
          [this, group_id, finished](ErrorCode e) {
            if (e == ErrorCode::none) subscribed_partitions_.erase(group_id);
            finished(e);
          });
  });
}

std::vector<OffsetsRecord> ConsumerGroupManager::removal_records(const ConsumerGroup& g,
                                                                 const std::string& member_id) const {
  return {current_assignment_tombstone(g.group_id, member_id), target_member_tombstone(g.group_id, member_id),
          subscription_tombstone(g.group_id, member_id), group_epoch_record(g.group_id, g.group_epoch + 1, 0)};
}

void ConsumerGroupManager::fence(const std::string& group_id, const std::string& member_id,
                                 std::function<void()> done) {
  const ConsumerGroup* g = find(group_id);
  if (!g || !g->members.contains(member_id)) return done();
  write(group_id, removal_records(*g, member_id), [this, group_id, member_id, done = std::move(done)](ErrorCode e) {
    // A failed write leaves the member; its session is tried again.
    if (e != ErrorCode::none) schedule_session(group_id, member_id);
    else cancel_timers(group_id, member_id);
    done();
  });
}

// --- timers -------------------------------------------------------------------

void ConsumerGroupManager::schedule_session(const std::string& group_id, const std::string& member_id) {
  const std::string key = session_key(group_id, member_id);
  const int64_t deadline = clock_.wall_ms() + config_.session_timeout_ms;
  session_deadlines_[key] = deadline;
  timer_.schedule(key, deadline, [this, group_id, member_id, key, deadline] {
    run_exclusive(group_id, [this, group_id, member_id, key, deadline] {
      // A heartbeat that ran while this waited its turn moved the deadline.
      auto it = session_deadlines_.find(key);
      if (it == session_deadlines_.end() || it->second != deadline) return finish(group_id);
      fence(group_id, member_id, [this, group_id] { finish(group_id); });
    });
  });
}

// Kafka's scheduleConsumerGroupRebalanceTimeout: a member that has not
// revoked what it must within its rebalance timeout is fenced, unless it
// moved on meanwhile.
void ConsumerGroupManager::schedule_rebalance_timeout(const std::string& group_id, const ConsumerGroupMember& m) {
  const int32_t epoch = m.member_epoch;
  const std::string member_id = m.member_id;
  timer_.schedule(rebalance_key(group_id, member_id), clock_.wall_ms() + std::max(m.rebalance_timeout_ms, 0),
                  [this, group_id, member_id, epoch] {
                    run_exclusive(group_id, [this, group_id, member_id, epoch] {
                      const ConsumerGroup* g = find(group_id);
                      const ConsumerGroupMember* member = nullptr;
                      if (g)
                        if (auto it = g->members.find(member_id); it != g->members.end()) member = &it->second;
                      if (!member || member->member_epoch != epoch ||
                          member->state != MemberState::unrevoked_partitions)
                        return finish(group_id);
                      fence(group_id, member_id, [this, group_id] { finish(group_id); });
                    });
                  });
}

void ConsumerGroupManager::cancel_timers(const std::string& group_id, const std::string& member_id) {
  session_deadlines_.erase(session_key(group_id, member_id));
  timer_.cancel(session_key(group_id, member_id));
  timer_.cancel(rebalance_key(group_id, member_id));
}

// --- subscriptions and assignors --------------------------------------------

const re2::RE2* ConsumerGroupManager::regex(const std::string& pattern) const {
  auto it = regexes_.find(pattern);
  if (it == regexes_.end()) {
    // Bounded: past the bound the cache starts over, and the patterns
    // members still use are compiled again as they are resolved.
    if (regexes_.size() >= kRegexCacheSize) regexes_.clear();
    re2::RE2::Options options;
    options.set_log_errors(false);
    it = regexes_.emplace(pattern, std::make_unique<re2::RE2>(pattern, options)).first;
  }
  return it->second.get();
}

ConsumerGroupManager::Resolved ConsumerGroupManager::resolve(const ConsumerGroupMember& m) const {
  Resolved r;
  auto add = [&](const std::string& name, const TopicImage& t) {
    r.ids.insert(t.id);
    r.topics[t.id] = SubscribedTopic{name, t.partitions, {}};
  };
  for (const std::string& name : m.subscribed_topic_names)
    if (auto t = topics_.find(name)) add(name, *t);
  if (m.subscribed_topic_regex) {
    const re2::RE2* re = regex(*m.subscribed_topic_regex);
    if (re->ok())
      topics_.for_each([&](const std::string& name, const TopicImage& t) {
        if (!is_internal_topic(name) && re2::RE2::FullMatch(name, *re)) add(name, t);
      });
  }
  return r;
}

// Kafka's preferred server assignor: the one most members ask for (ties to
// the first configured), else the first of group.consumer.assignors.
const PartitionAssignor& ConsumerGroupManager::assignor_for(
    const std::map<std::string, const ConsumerGroupMember*>& members) const {
  std::map<std::string, int> votes;
  for (const auto& [id, m] : members)
    if (m->server_assignor) ++votes[*m->server_assignor];
  const PartitionAssignor* best = assignors_.front().get();
  int most = 0;
  for (const auto& a : assignors_) {
    auto it = votes.find(std::string(a->name()));
    if (it != votes.end() && it->second > most) {
      most = it->second;
      best = a.get();
    }
  }
  return *best;
}

}  // namespace runnel::broker::group::consumer
