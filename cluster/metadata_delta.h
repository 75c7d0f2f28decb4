// The change between two metadata images (Kafka's MetadataDelta): which
// topics were created or deleted, which partitions changed, which brokers
// came, went or changed, and whether the controller moved. Subscribers of
// the metadata cache get the delta and the new image together, and act on
// the delta: the replica manager opens, leads, follows or drops partitions
// from local_changes(); coordinators load or unload their partitions.
//
// Computed by comparing images, so it is the same whether the image moved
// one write at a time (a watch event) or jumped (a reload after the watch
// lost its place): a topic deleted and created again under the same name
// has a new topic id, and is a deletion and a creation.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cluster/metadata_image.h"

namespace runnel::cluster {

struct TopicDelta {
  TopicPtr before;  // null: created
  TopicPtr after;   // null: deleted
  // The partitions whose registration differs, new ones included, by index.
  std::map<PartitionId, PartitionRegistration> changed_partitions;
  bool configs_changed = false;

  bool created() const { return !before && after; }
  bool deleted() const { return before && !after; }
};

// What one broker must do for its own replicas (Kafka's
// TopicsDelta.localChanges): lead, follow, or stop hosting.
struct LocalPartition {
  std::string topic;
  Uuid topic_id;
  PartitionId partition;
  PartitionRegistration registration;
};

struct LocalChanges {
  std::vector<LocalPartition> leaders;    // this broker leads at the registration's epoch
  std::vector<LocalPartition> followers;  // a replica that does not lead (no leader counts here)
  std::vector<LocalPartition> deletes;    // no longer a replica, or the topic is gone: the log goes
};

class MetadataDelta {
 public:
  MetadataDelta(ImagePtr before, ImagePtr after);

  const ImagePtr& before() const { return before_; }
  const ImagePtr& after() const { return after_; }
  // By topic id: a name can stand for a deleted and a created topic at once.
  const std::map<Uuid, TopicDelta>& topics() const { return topics_; }
  const std::set<NodeId>& changed_brokers() const { return changed_brokers_; }
  bool controller_changed() const { return before_->controller() != after_->controller(); }
  bool empty() const { return topics_.empty() && changed_brokers_.empty() && !controller_changed(); }

  LocalChanges local_changes(NodeId self) const;

 private:
  ImagePtr before_;
  ImagePtr after_;
  std::map<Uuid, TopicDelta> topics_;
  std::set<NodeId> changed_brokers_;
};

}  // namespace runnel::cluster
