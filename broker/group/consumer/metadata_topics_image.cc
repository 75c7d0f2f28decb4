#include "broker/group/consumer/metadata_topics_image.h"

namespace runnel::broker::group::consumer {

namespace {

TopicImage image_of(const cluster::TopicImage& t) {
  return TopicImage{t.id, static_cast<int32_t>(t.partitions.size())};
}

}  // namespace

std::optional<TopicImage> MetadataTopicsImage::find(const std::string& name) const {
  auto t = cache_->topic(name);
  if (!t) return std::nullopt;
  return image_of(*t);
}

std::optional<std::string> MetadataTopicsImage::name_of(const TopicId& id) const {
  auto t = cache_->topic(id);
  if (!t) return std::nullopt;
  return t->name;
}

void MetadataTopicsImage::for_each(const std::function<void(const std::string&, const TopicImage&)>& f) const {
  // The image is immutable: hold this one while walking it.
  auto image = cache_.image();
  for (const auto& [name, t] : image->topics()) f(name, image_of(*t));
}

}  // namespace runnel::broker::group::consumer
