// What a consumer group coordinator needs of the cluster's topics: ids and
// partition counts by name, to resolve subscriptions (names and regexes)
// and to give the assignors their input.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "broker/group/consumer/assignment.h"

namespace runnel::broker::group::consumer {

struct TopicImage {
  TopicId id;
  int32_t partitions = 0;
};

class TopicsImage {
 public:
  virtual ~TopicsImage() = default;
  virtual std::optional<TopicImage> find(const std::string& name) const = 0;
  virtual std::optional<std::string> name_of(const TopicId& id) const = 0;
  virtual void for_each(const std::function<void(const std::string& name, const TopicImage&)>& f) const = 0;
};

}  // namespace runnel::broker::group::consumer
