// The REST consumer instances of this broker, by group and name, as REST
// Proxy's KafkaConsumerManager keeps them: an instance not used for
// consumer.instance.timeout.ms (5 minutes) is closed, leaving its group,
// as is every instance when the broker stops. Instances live on the broker
// that created them: base_uri names it, and a client keeps talking to it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "broker/admin/rest/consumer_instance.h"

namespace runnel::broker::admin::rest {

class ConsumerRegistry {
 public:
  explicit ConsumerRegistry(Broker& broker, std::chrono::milliseconds instance_timeout = std::chrono::minutes(5));

  // nullptr when an instance of that name exists in the group.
  std::shared_ptr<ConsumerInstance> create(RestClient client, const std::string& group, const std::string& name,
                                           ConsumerInstanceConfig config);
  std::shared_ptr<ConsumerInstance> find(const std::string& group, const std::string& name) const;
  // Removes the instance; the caller closes it.
  std::shared_ptr<ConsumerInstance> remove(const std::string& group, const std::string& name);

  // Closes instances idle past the timeout, every second until stop().
  awaitable<void> expire_loop();
  awaitable<void> stop();

  size_t size() const { return instances_.size(); }

 private:
  Broker& broker_;
  std::chrono::milliseconds instance_timeout_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<ConsumerInstance>> instances_;
  asio::steady_timer tick_;
  bool stopped_ = false;
};

}  // namespace runnel::broker::admin::rest
