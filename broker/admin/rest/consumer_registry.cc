#include "broker/admin/rest/consumer_registry.h"

#include <vector>

#include "broker/broker.h"
#include "broker/logging.h"

namespace runnel::broker::admin::rest {

ConsumerRegistry::ConsumerRegistry(Broker& broker, std::chrono::milliseconds instance_timeout)
    : broker_(broker), instance_timeout_(instance_timeout), tick_(broker.io()) {}

std::shared_ptr<ConsumerInstance> ConsumerRegistry::create(RestClient client, const std::string& group,
                                                           const std::string& name, ConsumerInstanceConfig config) {
  auto [it, fresh] = instances_.try_emplace({group, name});
  if (!fresh) return nullptr;
  it->second = std::make_shared<ConsumerInstance>(broker_, std::move(client), group, name, config);
  return it->second;
}

std::shared_ptr<ConsumerInstance> ConsumerRegistry::find(const std::string& group, const std::string& name) const {
  auto it = instances_.find({group, name});
  return it == instances_.end() ? nullptr : it->second;
}

std::shared_ptr<ConsumerInstance> ConsumerRegistry::remove(const std::string& group, const std::string& name) {
  auto it = instances_.find({group, name});
  if (it == instances_.end()) return nullptr;
  auto instance = std::move(it->second);
  instances_.erase(it);
  return instance;
}

awaitable<void> ConsumerRegistry::expire_loop() {
  while (!stopped_) {
    tick_.expires_after(std::chrono::seconds(1));
    co_await tick_.async_wait(as_tuple_awaitable);
    if (stopped_) break;
    if (broker_.stopping()) {
      // Leave the groups while the broker can still answer.
      co_await stop();
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<ConsumerInstance>> idle;
    for (auto it = instances_.begin(); it != instances_.end();) {
      // An instance in the middle of an operation is in use.
      if (now - it->second->last_used() >= instance_timeout_ && !it->second->busy()) {
        idle.push_back(std::move(it->second));
        it = instances_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto& instance : idle) {
      RLOG_INFO("REST consumer %s of group %s expired after %lld ms unused", instance->name().c_str(),
                instance->group().c_str(), static_cast<long long>(instance_timeout_.count()));
      co_await instance->lock();
      ConsumerInstance::Turn turn(*instance);
      co_await instance->close();
    }
  }
}

awaitable<void> ConsumerRegistry::stop() {
  stopped_ = true;
  tick_.cancel();
  auto all = std::move(instances_);
  instances_.clear();
  for (auto& [key, instance] : all) {
    co_await instance->lock();
    ConsumerInstance::Turn turn(*instance);
    co_await instance->close();
  }
}

}  // namespace runnel::broker::admin::rest
