// The metadata handlers read (Kafka's KRaftMetadataCache): the current
// image, replaced whole when the metadata store reports a change, and the
// subscribers that act on each change (Kafka's MetadataPublisher: the
// replica manager, the group coordinator). Event-loop only: an image is
// immutable, so a handler holding one across a co_await still sees one
// consistent state.
#pragma once

#include <functional>
#include <vector>

#include "cluster/metadata_delta.h"

namespace runnel::cluster {

class MetadataCache {
 public:
  using Subscriber = std::function<void(const MetadataDelta&)>;

  explicit MetadataCache(ImagePtr initial = std::make_shared<const MetadataImage>());

  const ImagePtr& image() const { return image_; }
  const MetadataImage& operator*() const { return *image_; }
  const MetadataImage* operator->() const { return image_.get(); }

  // Subscribers run in the order they subscribed, after the image is
  // replaced, so each sees the new image in the cache.
  void subscribe(Subscriber s) { subscribers_.push_back(std::move(s)); }
  // Installs the next image; an image older than the current one (a late
  // watch event) is ignored. Returns whether it was installed.
  bool publish(ImagePtr next);

 private:
  ImagePtr image_;
  std::vector<Subscriber> subscribers_;
};

}  // namespace runnel::cluster
