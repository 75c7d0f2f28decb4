#include "cluster/metadata_delta.h"

namespace runnel::cluster {

namespace {

TopicDelta compare(TopicPtr before, TopicPtr after) {
  TopicDelta d;
  d.before = before;
  d.after = after;
  if (!after) return d;
  d.configs_changed = !before || before->configs != after->configs;
  for (size_t i = 0; i < after->partitions.size(); ++i) {
    const PartitionRegistration& now = after->partitions[i];
    if (!before || i >= before->partitions.size() || before->partitions[i] != now)
      d.changed_partitions.emplace(PartitionId(static_cast<int32_t>(i)), now);
  }
  return d;
}

}  // namespace

MetadataDelta::MetadataDelta(ImagePtr before, ImagePtr after) : before_(std::move(before)), after_(std::move(after)) {
  for (const auto& [name, t] : before_->topics()) {
    TopicPtr now = after_->topic(t->id);
    if (now == t) continue;  // shared: untouched
    TopicDelta d = compare(t, now);
    if (d.deleted() || !d.changed_partitions.empty() || d.configs_changed) topics_.emplace(t->id, std::move(d));
  }
  for (const auto& [name, t] : after_->topics())
    if (!before_->topic(t->id)) topics_.emplace(t->id, compare(nullptr, t));
  for (const auto& [id, b] : before_->brokers()) {
    const BrokerRegistration* now = after_->broker(id);
    if (!now || *now != b) changed_brokers_.insert(id);
  }
  for (const auto& [id, b] : after_->brokers())
    if (!before_->broker(id)) changed_brokers_.insert(id);
}

LocalChanges MetadataDelta::local_changes(NodeId self) const {
  LocalChanges out;
  for (const auto& [id, d] : topics_) {
    if (d.deleted()) {
      for (size_t i = 0; i < d.before->partitions.size(); ++i)
        if (d.before->partitions[i].is_replica(self))
          out.deletes.push_back({d.before->name, id, PartitionId(static_cast<int32_t>(i)), d.before->partitions[i]});
      continue;
    }
    for (const auto& [p, reg] : d.changed_partitions) {
      LocalPartition lp{d.after->name, id, p, reg};
      if (reg.leader == self) out.leaders.push_back(std::move(lp));
      else if (reg.is_replica(self)) out.followers.push_back(std::move(lp));
      else if (d.before) {
        // A reassignment moved this partition off this broker.
        if (const PartitionRegistration* was = d.before->partition(p); was && was->is_replica(self))
          out.deletes.push_back(std::move(lp));
      }
    }
  }
  return out;
}

}  // namespace runnel::cluster
