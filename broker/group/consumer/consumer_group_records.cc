#include "broker/group/consumer/consumer_group_records.h"

#include <vector>

#include "protocol/coordinator/all_records.h"
#include "protocol/coordinator_record.h"

namespace runnel::broker::group::consumer {

namespace p = runnel::protocol;

namespace {

template <typename Rec>
OffsetsRecord record(const typename Rec::Key& key, const typename Rec::Value& value) {
  return {p::record_key<Rec>(key), p::record_value<Rec>(value)};
}

template <typename Rec>
OffsetsRecord tombstone(const typename Rec::Key& key) {
  return {p::record_key<Rec>(key), std::nullopt};
}

p::ConsumerGroupMetadataKey group_key(const std::string& group_id) {
  p::ConsumerGroupMetadataKey k;
  k.group_id = group_id;
  return k;
}

p::ConsumerGroupTargetAssignmentMetadataKey target_epoch_key(const std::string& group_id) {
  p::ConsumerGroupTargetAssignmentMetadataKey k;
  k.group_id = group_id;
  return k;
}

template <typename Key>
Key member_key(const std::string& group_id, const std::string& member_id) {
  Key k;
  k.group_id = group_id;
  k.member_id = member_id;
  return k;
}

template <typename TopicPartitions>
std::vector<TopicPartitions> to_topic_partitions(const Assignment& a) {
  std::vector<TopicPartitions> out;
  for (const auto& [topic, partitions] : a) {
    if (partitions.empty()) continue;
    auto& tp = out.emplace_back();
    tp.topic_id = topic;
    tp.partitions.assign(partitions.begin(), partitions.end());
  }
  return out;
}

template <typename TopicPartitions>
Assignment from_topic_partitions(const std::vector<TopicPartitions>& tps) {
  Assignment a;
  for (const auto& tp : tps)
    if (!tp.partitions.empty()) a[tp.topic_id].insert(tp.partitions.begin(), tp.partitions.end());
  return a;
}

ConsumerGroup& group_of(std::map<std::string, ConsumerGroup>& groups, const std::string& group_id) {
  auto [it, created] = groups.try_emplace(group_id);
  if (created) it->second.group_id = group_id;
  return it->second;
}

ConsumerGroupMember& member_of(ConsumerGroup& g, const std::string& member_id) {
  auto [it, created] = g.members.try_emplace(member_id);
  if (created) it->second.member_id = member_id;
  return it->second;
}

// The record of type Rec: its key, and its value unless a tombstone; false
// when either does not decode.
template <typename Rec, typename Apply>
bool replay_as(p::ByteView key, const std::optional<p::ByteView>& value, Apply&& apply) {
  auto k = p::decode_record_key<Rec>(key);
  if (!k) return false;
  if (!value) {
    apply(*k, static_cast<const typename Rec::Value*>(nullptr));
    return true;
  }
  auto v = p::decode_record_value<Rec>(*value);
  if (!v) return false;
  apply(*k, &*v);
  return true;
}

}  // namespace

OffsetsRecord group_epoch_record(const std::string& group_id, int32_t epoch, int64_t metadata_hash) {
  p::ConsumerGroupMetadataValue v;
  v.epoch = epoch;
  v.metadata_hash = metadata_hash;
  return record<p::ConsumerGroupMetadataRecord>(group_key(group_id), v);
}

OffsetsRecord group_epoch_tombstone(const std::string& group_id) {
  return tombstone<p::ConsumerGroupMetadataRecord>(group_key(group_id));
}

OffsetsRecord subscription_record(const std::string& group_id, const ConsumerGroupMember& m) {
  p::ConsumerGroupMemberMetadataValue v;
  v.instance_id = m.instance_id;
  v.rack_id = m.rack_id;
  v.client_id = m.client_id;
  v.client_host = m.client_host;
  v.subscribed_topic_names = m.subscribed_topic_names;
  v.subscribed_topic_regex = m.subscribed_topic_regex;
  v.rebalance_timeout_ms = m.rebalance_timeout_ms;
  v.server_assignor = m.server_assignor;
  return record<p::ConsumerGroupMemberMetadataRecord>(
      member_key<p::ConsumerGroupMemberMetadataKey>(group_id, m.member_id), v);
}

OffsetsRecord subscription_tombstone(const std::string& group_id, const std::string& member_id) {
  return tombstone<p::ConsumerGroupMemberMetadataRecord>(
      member_key<p::ConsumerGroupMemberMetadataKey>(group_id, member_id));
}

OffsetsRecord target_member_record(const std::string& group_id, const std::string& member_id, const Assignment& a) {
  p::ConsumerGroupTargetAssignmentMemberValue v;
  v.topic_partitions = to_topic_partitions<p::ConsumerGroupTargetAssignmentMemberValue::TopicPartition>(a);
  return record<p::ConsumerGroupTargetAssignmentMemberRecord>(
      member_key<p::ConsumerGroupTargetAssignmentMemberKey>(group_id, member_id), v);
}

OffsetsRecord target_member_tombstone(const std::string& group_id, const std::string& member_id) {
  return tombstone<p::ConsumerGroupTargetAssignmentMemberRecord>(
      member_key<p::ConsumerGroupTargetAssignmentMemberKey>(group_id, member_id));
}

OffsetsRecord target_epoch_record(const std::string& group_id, int32_t assignment_epoch) {
  p::ConsumerGroupTargetAssignmentMetadataValue v;
  v.assignment_epoch = assignment_epoch;
  return record<p::ConsumerGroupTargetAssignmentMetadataRecord>(target_epoch_key(group_id), v);
}

OffsetsRecord target_epoch_tombstone(const std::string& group_id) {
  return tombstone<p::ConsumerGroupTargetAssignmentMetadataRecord>(target_epoch_key(group_id));
}

OffsetsRecord current_assignment_record(const std::string& group_id, const ConsumerGroupMember& m) {
  using TopicPartitions = p::ConsumerGroupCurrentMemberAssignmentValue::TopicPartitions;
  p::ConsumerGroupCurrentMemberAssignmentValue v;
  v.member_epoch = m.member_epoch;
  v.previous_member_epoch = m.previous_member_epoch;
  v.state = static_cast<int8_t>(m.state);
  v.assigned_partitions = to_topic_partitions<TopicPartitions>(m.assigned_partitions);
  v.partitions_pending_revocation = to_topic_partitions<TopicPartitions>(m.partitions_pending_revocation);
  return record<p::ConsumerGroupCurrentMemberAssignmentRecord>(
      member_key<p::ConsumerGroupCurrentMemberAssignmentKey>(group_id, m.member_id), v);
}

OffsetsRecord current_assignment_tombstone(const std::string& group_id, const std::string& member_id) {
  return tombstone<p::ConsumerGroupCurrentMemberAssignmentRecord>(
      member_key<p::ConsumerGroupCurrentMemberAssignmentKey>(group_id, member_id));
}

bool is_consumer_group_record(int16_t type) {
  switch (type) {
    case p::ConsumerGroupMetadataRecord::type:
    case p::ConsumerGroupMemberMetadataRecord::type:
    case p::ConsumerGroupTargetAssignmentMetadataRecord::type:
    case p::ConsumerGroupTargetAssignmentMemberRecord::type:
    case p::ConsumerGroupCurrentMemberAssignmentRecord::type:
    case p::ConsumerGroupRegularExpressionRecord::type:
    case 4:  // ConsumerGroupPartitionMetadata: Kafka 4.0's, read and ignored (KIP-1101)
      return true;
    default:
      return false;
  }
}

bool replay(std::map<std::string, ConsumerGroup>& groups, p::ByteView key, const std::optional<p::ByteView>& value) {
  auto type = p::record_type(key);
  if (!type) return false;
  switch (*type) {
    case p::ConsumerGroupMetadataRecord::type:
      return replay_as<p::ConsumerGroupMetadataRecord>(key, value, [&](const auto& k, const auto* v) {
        if (!v) {
          groups.erase(k.group_id);
          return;
        }
        ConsumerGroup& g = group_of(groups, k.group_id);
        g.group_epoch = v->epoch;
        g.metadata_hash = v->metadata_hash;
      });
    case p::ConsumerGroupMemberMetadataRecord::type:
      return replay_as<p::ConsumerGroupMemberMetadataRecord>(key, value, [&](const auto& k, const auto* v) {
        if (!v) {
          if (auto it = groups.find(k.group_id); it != groups.end()) it->second.members.erase(k.member_id);
          return;
        }
        ConsumerGroupMember& m = member_of(group_of(groups, k.group_id), k.member_id);
        m.instance_id = v->instance_id;
        m.rack_id = v->rack_id;
        m.client_id = v->client_id;
        m.client_host = v->client_host;
        m.subscribed_topic_names = v->subscribed_topic_names;
        m.subscribed_topic_regex = v->subscribed_topic_regex;
        m.rebalance_timeout_ms = v->rebalance_timeout_ms;
        m.server_assignor = v->server_assignor;
      });
    case p::ConsumerGroupTargetAssignmentMetadataRecord::type:
      return replay_as<p::ConsumerGroupTargetAssignmentMetadataRecord>(key, value, [&](const auto& k, const auto* v) {
        // Its tombstone comes with the group's, which removes the group.
        if (v) group_of(groups, k.group_id).assignment_epoch = v->assignment_epoch;
      });
    case p::ConsumerGroupTargetAssignmentMemberRecord::type:
      return replay_as<p::ConsumerGroupTargetAssignmentMemberRecord>(key, value, [&](const auto& k, const auto* v) {
        if (!v) {
          if (auto it = groups.find(k.group_id); it != groups.end()) it->second.target.erase(k.member_id);
          return;
        }
        group_of(groups, k.group_id).target[k.member_id] = from_topic_partitions(v->topic_partitions);
      });
    case p::ConsumerGroupCurrentMemberAssignmentRecord::type:
      return replay_as<p::ConsumerGroupCurrentMemberAssignmentRecord>(key, value, [&](const auto& k, const auto* v) {
        if (!v) {
          // The member leaves: its subscription's tombstone follows.
          auto it = groups.find(k.group_id);
          if (it == groups.end()) return;
          auto m = it->second.members.find(k.member_id);
          if (m == it->second.members.end()) return;
          m->second.member_epoch = -1;
          m->second.state = MemberState::stable;
          m->second.assigned_partitions.clear();
          m->second.partitions_pending_revocation.clear();
          return;
        }
        ConsumerGroupMember& m = member_of(group_of(groups, k.group_id), k.member_id);
        m.member_epoch = v->member_epoch;
        m.previous_member_epoch = v->previous_member_epoch;
        m.state = member_state_from(v->state);
        m.assigned_partitions = from_topic_partitions(v->assigned_partitions);
        m.partitions_pending_revocation = from_topic_partitions(v->partitions_pending_revocation);
      });
    case p::ConsumerGroupRegularExpressionRecord::type:
      // Resolved again from the metadata at the next heartbeat.
      return replay_as<p::ConsumerGroupRegularExpressionRecord>(key, value, [](const auto&, const auto*) {});
    case 4:
      return true;
    default:
      return false;
  }
}

}  // namespace runnel::broker::group::consumer
