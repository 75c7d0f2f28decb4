// Builds metadata images from the store's keys (Kafka's MetadataLoader,
// with the store's revisions as its log): load() takes everything a
// range("") returned at startup, apply() each batch a watch then delivers,
// and each returns the image after it. An image shares every topic the
// batch did not touch, so the metadata cache's delta stays small.
//
// Keys it does not know (configs, producer ids) are not part of the image
// and are skipped; a value it cannot read is reported through `warn` and
// left out (a bad key must not take a broker down).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cluster/metadata_image.h"
#include "cluster/metadata_store.h"

namespace runnel::cluster {

class MetadataLoader {
 public:
  using Warn = std::function<void(const std::string&)>;

  // `self`: this broker, the sole replica and leader of every partition of
  // a topic with no partition keys (a single node's topics).
  MetadataLoader(std::string cluster_id, NodeId self, Warn warn);

  ImagePtr load(const RangeResult& everything);
  ImagePtr apply(const std::vector<WatchEvent>& events);
  const ImagePtr& image() const { return image_; }

 private:
  // Rebuilds what the changed keys feed, over the current image.
  ImagePtr rebuild(const std::set<std::string>& topics, bool brokers, bool controller, Revision revision);
  std::optional<TopicImage> topic_from_keys(const std::string& name);

  std::string cluster_id_;
  NodeId self_;
  Warn warn_;
  std::map<std::string, KeyValue> kvs_;  // the image's keys as they stand
  ImagePtr image_;
};

}  // namespace runnel::cluster
