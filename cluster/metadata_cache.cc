#include "cluster/metadata_cache.h"

namespace runnel::cluster {

MetadataCache::MetadataCache(ImagePtr initial) : image_(std::move(initial)) {}

bool MetadataCache::publish(ImagePtr next) {
  if (next->revision() < image_->revision()) return false;
  MetadataDelta delta(image_, next);
  image_ = std::move(next);
  if (delta.empty()) return true;
  for (auto& s : subscribers_) s(delta);
  return true;
}

}  // namespace runnel::cluster
