// Kafka 4.1's two uniform builders, with Kafka's choices and tie-breaks, in
// one fixed order: members by member id, topics by topic id. (Kafka walks
// Java hash maps there, so on equal footing it may pick other members or
// partitions than Runnel; balance and what stays put are the same.)
//
// Input Kafka would throw on (PartitionAssignorException for a subscribed
// topic id missing from the metadata) or never sees (a previous target with
// a partition out of range, or with one partition under two members) is
// cleaned first: unknown topics are dropped from subscriptions, and of the
// previous target a member keeps only partitions that exist, of topics it
// still subscribes to, that no member before it claimed.
#include "broker/group/consumer/uniform_assignor.h"

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <utility>
#include <vector>

namespace runnel::broker::group::consumer {

namespace {

int32_t partition_count(const SubscribedTopics& topics, const TopicId& topic) {
  auto it = topics.find(topic);
  return it == topics.end() ? 0 : std::max(it->second.partitions, 0);
}

// The group as both builders take it: members by index in member-id order.
struct Members {
  std::vector<const std::string*> ids;
  std::vector<std::set<TopicId>> subscribed;  // existing topics only
  std::vector<Assignment> previous;           // what each may keep, cleaned
};

Members clean(const GroupSpec& group, const SubscribedTopics& topics) {
  Members m;
  std::map<TopicId, std::vector<bool>> claimed;
  for (const auto& [member_id, member] : group.members) {
    std::set<TopicId> subscribed;
    for (const TopicId& topic : member.subscribed_topic_ids)
      if (topics.contains(topic)) subscribed.insert(topic);

    Assignment previous;
    for (const auto& [topic, partitions] : member.target) {
      if (!subscribed.contains(topic)) continue;
      auto& taken = claimed.try_emplace(topic, partition_count(topics, topic), false).first->second;
      for (int32_t p : partitions) {
        if (p < 0 || p >= static_cast<int32_t>(taken.size()) || taken[p]) continue;
        taken[p] = true;
        previous[topic].insert(p);
      }
    }
    m.ids.push_back(&member_id);
    m.subscribed.push_back(std::move(subscribed));
    m.previous.push_back(std::move(previous));
  }
  return m;
}

// --- UniformHomogeneousAssignmentBuilder -----------------------------------
//
// Each member gets a quota of total / members; total % members of them one
// more. A member keeps its previous partitions up to its quota, topic by
// topic and lowest partition first, and gives up the rest. The extra
// partitions go to members that already hold quota + 1 (KAFKA-18688, in
// 4.1: any member may keep the extra one, so a balanced target stays as it
// is); those still unclaimed go to the last members that can take more.
// Then the free partitions (never assigned, in topic and partition order,
// followed by those given up, in the order given up) fill the members with
// room, in member order.

GroupAssignment homogeneous(const Members& m, const SubscribedTopics& topics) {
  const size_t n = m.ids.size();
  const std::set<TopicId>& subscribed = m.subscribed.front();

  std::vector<std::pair<TopicId, int32_t>> free;
  int64_t total = 0;
  for (const TopicId& topic : subscribed) {
    const int32_t count = partition_count(topics, topic);
    std::vector<bool> owned(count, false);
    for (const Assignment& previous : m.previous)
      if (auto it = previous.find(topic); it != previous.end())
        for (int32_t p : it->second) owned[p] = true;
    for (int32_t p = 0; p < count; ++p)
      if (!owned[p]) free.emplace_back(topic, p);
    total += count;
  }
  const int64_t min_quota = total / static_cast<int64_t>(n);
  int64_t extras_left = total % static_cast<int64_t>(n);

  std::vector<Assignment> target(n);
  struct Unfilled {
    size_t member;
    int64_t room;
  };
  std::vector<Unfilled> unfilled;
  for (size_t i = 0; i < n; ++i) {
    int64_t room = min_quota;
    bool may_take_extra = extras_left > 0;
    if (may_take_extra) ++room;
    for (const auto& [topic, partitions] : m.previous[i]) {
      for (int32_t p : partitions) {
        if (room > 0) {
          target[i][topic].insert(p);
          --room;
        } else {
          free.emplace_back(topic, p);
        }
      }
    }
    if (may_take_extra) {
      if (room > 0) {
        --room;  // short of quota + 1: leave the extra for a member that has it
        may_take_extra = false;
      } else {
        --extras_left;  // kept quota + 1
      }
    }
    if (room > 0 || (extras_left > 0 && !may_take_extra)) unfilled.push_back({i, room});
  }

  for (auto it = unfilled.rbegin(); it != unfilled.rend() && extras_left > 0; ++it) {
    ++it->room;
    --extras_left;
  }

  size_t next = 0;
  for (const Unfilled& u : unfilled)
    for (int64_t k = 0; k < u.room && next < free.size(); ++k, ++next)
      target[u.member][free[next].first].insert(free[next].second);
  if (next != free.size()) throw std::logic_error("uniform assignor: partitions left unassigned");

  GroupAssignment result;
  for (size_t i = 0; i < n; ++i) result[*m.ids[i]] = std::move(target[i]);
  return result;
}

// --- UniformHeterogeneousAssignmentBuilder ---------------------------------
//
// Every member keeps all its previous partitions of topics it still
// subscribes to. The free partitions are then handed out topic by topic,
// each to the least loaded subscriber. Last, topic by topic, partitions move
// from a topic's most loaded subscribers to its least loaded ones until
// they differ by at most one; the pass over the topics repeats until a full
// pass moves nothing, at most 16 times (Kafka's MAX_ITERATION_COUNT).
// Topics go most partitions per subscriber first, then fewest subscribers,
// then topic id.

constexpr int max_balance_passes = 16;

struct TopicState {
  TopicId id;
  int32_t partitions = 0;
  std::vector<size_t> subscribers;  // member indexes, ascending
  std::vector<int64_t> owner;       // member index by partition, -1 if free
};

bool goes_first(const TopicState& a, const TopicState& b) {
  const double per_a = static_cast<double>(a.partitions) / static_cast<double>(a.subscribers.size());
  const double per_b = static_cast<double>(b.partitions) / static_cast<double>(b.subscribers.size());
  if (per_a != per_b) return per_a > per_b;
  if (a.subscribers.size() != b.subscribers.size()) return a.subscribers.size() < b.subscribers.size();
  return a.id < b.id;
}

// A topic's subscribers by load, lightest first (ties by member index), and
// two cursors over them, as in Kafka's MemberAssignmentBalancer. The light
// cursor hands out one partition to each member of the lightest level in
// turn, then widens to the next level. The heavy cursor takes one from each
// member of the heaviest level, from the end of the list, then widens
// downwards; a member with nothing left to give is swapped out past the end
// of the heavy range. They are balanced once the two levels differ by at
// most one.
class LoadCursors {
 public:
  explicit LoadCursors(const std::vector<int64_t>& sizes) : sizes_(sizes) {}

  // Starts over on `members` (not empty); returns heaviest - lightest load.
  int64_t reset(const std::vector<size_t>& members) {
    order_ = members;
    std::sort(order_.begin(), order_.end(),
              [this](size_t a, size_t b) { return std::pair(sizes_[a], a) < std::pair(sizes_[b], b); });
    light_end_ = 0;
    light_next_ = 0;
    light_level_ = load(0) - 1;
    heavy_begin_ = heavy_end_ = order_.size();
    heavy_next_ = static_cast<int64_t>(order_.size()) - 1;
    heavy_level_ = load(order_.size() - 1) + 1;
    return load(order_.size() - 1) - load(0);
  }

  // The member to give the next partition to.
  size_t next_light() {
    if (light_next_ >= light_end_) {
      ++light_level_;
      while (light_end_ < order_.size() && load(light_end_) == light_level_) ++light_end_;
      light_next_ = 0;
    }
    return order_[light_next_++];
  }

  // The member to take the next partition from, or -1 if none is left.
  int64_t next_heavy() {
    if (heavy_next_ < static_cast<int64_t>(heavy_begin_)) {
      if (heavy_end_ <= heavy_begin_ && heavy_begin_ > 0)
        heavy_level_ = load(heavy_begin_ - 1);  // all swapped out: restart one level down
      else
        --heavy_level_;
      while (heavy_begin_ > 0 && load(heavy_begin_ - 1) == heavy_level_) --heavy_begin_;
      heavy_next_ = static_cast<int64_t>(heavy_end_) - 1;
    }
    if (heavy_next_ < 0) return -1;
    return static_cast<int64_t>(order_[static_cast<size_t>(heavy_next_--)]);
  }

  // Drops the member next_heavy just returned from the heavy range.
  void drop_heavy() {
    std::swap(order_[static_cast<size_t>(heavy_next_ + 1)], order_[heavy_end_ - 1]);
    --heavy_end_;
  }

  bool balanced() const { return heavy_level_ - light_level_ <= 1; }

 private:
  int64_t load(size_t position) const { return sizes_[order_[position]]; }

  const std::vector<int64_t>& sizes_;
  std::vector<size_t> order_;
  size_t light_end_ = 0;  // [0, light_end_) is the light range
  size_t light_next_ = 0;
  int64_t light_level_ = 0;
  size_t heavy_begin_ = 0;  // [heavy_begin_, heavy_end_) is the heavy range
  size_t heavy_end_ = 0;
  int64_t heavy_next_ = 0;
  int64_t heavy_level_ = 0;
};

class Heterogeneous {
 public:
  Heterogeneous(const Members& m, const SubscribedTopics& topics)
      : m_(m), sizes_(m.ids.size(), 0), target_(m.ids.size()) {
    for (size_t i = 0; i < m.ids.size(); ++i)
      for (const TopicId& topic : m.subscribed[i]) {
        TopicState& t = topics_[topic];
        if (t.subscribers.empty()) {
          t.id = topic;
          t.partitions = partition_count(topics, topic);
          t.owner.assign(t.partitions, -1);
        }
        t.subscribers.push_back(i);
      }
  }

  GroupAssignment build() {
    keep_previous();
    assign_free();
    balance();
    GroupAssignment result;
    for (size_t i = 0; i < m_.ids.size(); ++i) result[*m_.ids[i]] = std::move(target_[i]);
    return result;
  }

 private:
  void keep_previous() {
    for (size_t i = 0; i < m_.ids.size(); ++i)
      for (const auto& [topic, partitions] : m_.previous[i]) {
        TopicState& t = topics_.at(topic);
        for (int32_t p : partitions) t.owner[p] = static_cast<int64_t>(i);
        sizes_[i] += static_cast<int64_t>(partitions.size());
        target_[i][topic] = partitions;
      }
  }

  void assign_free() {
    std::vector<TopicState*> order;
    for (auto& [id, t] : topics_)
      if (std::find(t.owner.begin(), t.owner.end(), -1) != t.owner.end()) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const TopicState* a, const TopicState* b) { return goes_first(*a, *b); });

    LoadCursors cursors(sizes_);
    for (TopicState* t : order) {
      cursors.reset(t->subscribers);
      for (int32_t p = 0; p < t->partitions; ++p)
        if (t->owner[p] == -1) move(*t, p, cursors.next_light());
    }
  }

  void balance() {
    std::vector<TopicState*> order;
    for (auto& [id, t] : topics_)
      if (t.subscribers.size() >= 2) order.push_back(&t);
    std::sort(order.begin(), order.end(), [](const TopicState* a, const TopicState* b) { return goes_first(*a, *b); });

    LoadCursors cursors(sizes_);
    int64_t last_moved = -1;  // the last topic whose pass moved something
    for (int pass = 0; pass < max_balance_passes; ++pass)
      for (size_t i = 0; i < order.size(); ++i) {
        if (static_cast<int64_t>(i) == last_moved) return;  // a full pass moved nothing
        if (balance_topic(*order[i], cursors) > 0 || last_moved == -1) last_moved = static_cast<int64_t>(i);
      }
  }

  // Moves partitions of `t` from its heaviest subscribers to its lightest,
  // a giver's highest partition first; returns how many moved.
  int64_t balance_topic(TopicState& t, LoadCursors& cursors) {
    if (cursors.reset(t.subscribers) <= 1) return 0;

    std::map<size_t, std::vector<int32_t>> held;  // each subscriber's partitions of t, ascending
    for (int32_t p = 0; p < t.partitions; ++p)
      if (t.owner[p] >= 0) held[static_cast<size_t>(t.owner[p])].push_back(p);

    int64_t moved = 0;
    while (!cursors.balanced()) {
      int64_t giver;
      while ((giver = cursors.next_heavy()) != -1) {
        auto it = held.find(static_cast<size_t>(giver));
        if (it != held.end() && !it->second.empty()) break;
        cursors.drop_heavy();
      }
      if (giver == -1) break;

      std::vector<int32_t>& from = held[static_cast<size_t>(giver)];
      const int32_t p = from.back();
      from.pop_back();
      const size_t taker = cursors.next_light();
      if (cursors.balanced()) break;
      move(t, p, taker);
      ++moved;
    }
    return moved;
  }

  void move(TopicState& t, int32_t p, size_t to) {
    if (const int64_t from = t.owner[p]; from >= 0) {
      Assignment& a = target_[static_cast<size_t>(from)];
      auto it = a.find(t.id);
      it->second.erase(p);
      if (it->second.empty()) a.erase(it);
      --sizes_[static_cast<size_t>(from)];
    }
    target_[to][t.id].insert(p);
    t.owner[p] = static_cast<int64_t>(to);
    ++sizes_[to];
  }

  const Members& m_;
  std::map<TopicId, TopicState> topics_;  // the subscribed ones
  std::vector<int64_t> sizes_;            // partitions per member
  std::vector<Assignment> target_;
};

bool same_subscriptions(const Members& m) {
  return std::all_of(m.subscribed.begin(), m.subscribed.end(),
                     [&](const std::set<TopicId>& s) { return s == m.subscribed.front(); });
}

}  // namespace

GroupAssignment UniformAssignor::assign(const GroupSpec& group, const SubscribedTopics& topics) const {
  if (group.members.empty()) return {};
  const Members m = clean(group, topics);
  return same_subscriptions(m) ? homogeneous(m, topics) : Heterogeneous(m, topics).build();
}

GroupAssignment UniformAssignor::assign_homogeneous(const GroupSpec& group, const SubscribedTopics& topics) {
  if (group.members.empty()) return {};
  const Members m = clean(group, topics);
  assert(same_subscriptions(m));
  return homogeneous(m, topics);
}

GroupAssignment UniformAssignor::assign_heterogeneous(const GroupSpec& group, const SubscribedTopics& topics) {
  if (group.members.empty()) return {};
  const Members m = clean(group, topics);
  return Heterogeneous(m, topics).build();
}

}  // namespace runnel::broker::group::consumer
