#include "cluster/metadata_loader.h"

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"
#include "cluster/partition_change.h"

namespace runnel::cluster {

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The topic a topics/ or partitions/ key belongs to; "" for other keys.
std::string topic_of(const std::string& key) {
  if (starts_with(key, keys::kTopicsPrefix)) return key.substr(std::string(keys::kTopicsPrefix).size());
  if (starts_with(key, keys::kPartitionsPrefix)) {
    std::string rest = key.substr(std::string(keys::kPartitionsPrefix).size());
    return rest.substr(0, rest.find('/'));
  }
  return {};
}

bool is_image_key(const std::string& key) {
  return !topic_of(key).empty() || starts_with(key, keys::kBrokersPrefix) || key == keys::kController;
}

}  // namespace

MetadataLoader::MetadataLoader(std::string cluster_id, NodeId self, Warn warn)
    : cluster_id_(std::move(cluster_id)),
      self_(self),
      warn_(std::move(warn)),
      image_(std::make_shared<const MetadataImage>(cluster_id_)) {}

ImagePtr MetadataLoader::load(const RangeResult& everything) {
  kvs_.clear();
  image_ = std::make_shared<const MetadataImage>(cluster_id_);
  std::set<std::string> topics;
  for (const auto& kv : everything.kvs) {
    if (!is_image_key(kv.key)) continue;
    kvs_[kv.key] = kv;
    if (auto t = topic_of(kv.key); !t.empty()) topics.insert(t);
  }
  return rebuild(topics, true, true, everything.revision);
}

ImagePtr MetadataLoader::apply(const std::vector<WatchEvent>& events) {
  std::set<std::string> topics;
  bool brokers = false, controller = false;
  Revision revision = image_->revision();
  for (const auto& e : events) {
    const std::string& key = e.kv.key;
    if (!is_image_key(key)) continue;
    if (e.kind == WatchEvent::Kind::put) kvs_[key] = e.kv;
    else kvs_.erase(key);
    revision = std::max(revision, e.kv.mod_revision);
    if (auto t = topic_of(key); !t.empty()) topics.insert(t);
    else if (key == keys::kController) controller = true;
    else brokers = true;
  }
  return rebuild(topics, brokers, controller, revision);
}

std::optional<TopicImage> MetadataLoader::topic_from_keys(const std::string& name) {
  auto it = kvs_.find(keys::topic(name));
  if (it == kvs_.end()) return std::nullopt;  // deleted, or its partitions written first
  auto record = decode_topic(it->second.value);
  if (auto* why = std::get_if<std::string>(&record)) {
    warn_("metadata key " + it->first + " left out: " + *why);
    return std::nullopt;
  }
  auto& r = std::get<TopicRecord>(record);
  if (r.id.is_zero()) {
    // Kafka's ZERO_UUID names no topic.
    warn_("metadata key " + it->first + " left out: topic " + r.name + " has no valid id");
    return std::nullopt;
  }
  TopicImage t;
  t.name = r.name;
  t.id = r.id;
  t.internal = is_internal_topic(name);
  t.configs = std::move(r.configs);
  t.mod_revision = it->second.mod_revision;
  t.create_revision = it->second.create_revision;
  for (int32_t i = 0; i < r.partitions; ++i) {
    auto p = kvs_.find(keys::partition(name, i));
    if (p == kvs_.end() && !r.assignment.empty()) {
      t.partitions.push_back(new_partition(r.assignment[static_cast<size_t>(i)]));
      continue;
    }
    if (p == kvs_.end()) {
      PartitionRegistration local;
      local.replicas = {self_};
      local.isr = {self_};
      local.leader = self_;
      t.partitions.push_back(std::move(local));
      continue;
    }
    auto reg = decode_partition(p->second.value);
    if (auto* why = std::get_if<std::string>(&reg)) {
      // A partition cannot be skipped (indexes would shift): it is leaderless.
      warn_("metadata key " + p->first + " unreadable: " + *why);
      PartitionRegistration none;
      none.leader = kNoNode;
      t.partitions.push_back(std::move(none));
      continue;
    }
    auto& registered = t.partitions.emplace_back(std::get<PartitionRegistration>(std::move(reg)));
    registered.mod_revision = p->second.mod_revision;
  }
  return t;
}

ImagePtr MetadataLoader::rebuild(const std::set<std::string>& topics, bool brokers, bool controller,
                                 Revision revision) {
  MetadataImage next = image_->with_revision(revision);
  for (const auto& name : topics) {
    std::optional<TopicImage> t = topic_from_keys(name);
    if (!t) {
      next = next.without_topic(name);
      continue;
    }
    if (auto same_id = next.topic(t->id); same_id && same_id->name != name) {
      warn_("metadata key " + keys::topic(name) + " left out: its topic id is " + same_id->name + "'s");
      continue;
    }
    next = next.with_topic(std::move(*t));
  }
  if (brokers) {
    for (const auto& [id, b] : image_->brokers()) next = next.without_broker(id);
    for (auto it = kvs_.lower_bound(keys::kBrokersPrefix); it != kvs_.end() && starts_with(it->first, keys::kBrokersPrefix);
         ++it) {
      auto b = decode_broker(it->second.value);
      if (auto* why = std::get_if<std::string>(&b)) warn_("metadata key " + it->first + " left out: " + *why);
      else {
        auto& broker = std::get<BrokerRegistration>(b);
        broker.epoch = it->second.create_revision;
        next = next.with_broker(std::move(broker));
      }
    }
  }
  if (controller) {
    std::optional<NodeId> c;
    if (auto it = kvs_.find(keys::kController); it != kvs_.end()) {
      auto id = decode_controller(it->second.value);
      if (auto* why = std::get_if<std::string>(&id)) warn_("metadata key controller left out: " + *why);
      else c = std::get<NodeId>(id);
    }
    next = next.with_controller(c);
  }
  image_ = std::make_shared<const MetadataImage>(std::move(next));
  return image_;
}

}  // namespace runnel::cluster
