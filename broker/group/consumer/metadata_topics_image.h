// The consumer group coordinator's view of the topics: the broker's current
// metadata image (cluster/metadata_cache.h), read at each call, so a topic
// created or grown is seen at the next heartbeat.
#pragma once

#include "broker/group/consumer/topics_image.h"
#include "cluster/metadata_cache.h"

namespace runnel::broker::group::consumer {

class MetadataTopicsImage final : public TopicsImage {
 public:
  explicit MetadataTopicsImage(const cluster::MetadataCache& cache) : cache_(cache) {}
  std::optional<TopicImage> find(const std::string& name) const override;
  std::optional<std::string> name_of(const TopicId& id) const override;
  void for_each(const std::function<void(const std::string&, const TopicImage&)>& f) const override;

 private:
  const cluster::MetadataCache& cache_;
};

}  // namespace runnel::broker::group::consumer
