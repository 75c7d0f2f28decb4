#include "broker/inter_broker_channel.h"

namespace runnel::broker {

InterBrokerChannel::InterBrokerChannel(asio::any_io_executor ex, Options options, Resolve resolve)
    : ex_(std::move(ex)), options_(std::move(options)), resolve_(std::move(resolve)) {}

std::unique_ptr<replication::BrokerSender> InterBrokerChannel::take(NodeId node, const Endpoint& at) {
  auto& idle = idle_[node];
  // A broker that moved (restarted on another port) makes its idle
  // connections useless.
  std::erase_if(idle, [&](const auto& s) { return s->host() != at.first || s->port() != at.second; });
  if (!idle.empty()) {
    auto sender = std::move(idle.back());
    idle.pop_back();
    return sender;
  }
  return std::make_unique<replication::BrokerSender>(ex_, at.first, at.second, options_.client_id, options_.timeout,
                                                     options_.tls, options_.verify_host, options_.sasl);
}

void InterBrokerChannel::give_back(NodeId node, std::unique_ptr<replication::BrokerSender> sender) {
  auto& idle = idle_[node];
  if (idle.size() < kMaxIdle) idle.push_back(std::move(sender));
}

}  // namespace runnel::broker
