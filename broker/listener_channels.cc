#include "broker/listener_channels.h"

#include "broker/logging.h"
#include "security/channel_builder.h"

namespace runnel::broker {

ListenerChannels::ListenerChannels(const BrokerConfig& config, ScramCredentialLookup scram) {
  for (const auto& l : config.listeners()) builders_[l.name] = channel_builder(config, l.name, scram);
}

std::shared_ptr<const security::ChannelBuilder> ListenerChannels::get(const std::string& listener) const {
  auto it = builders_.find(listener);
  return it == builders_.end() ? nullptr : it->second;
}

ListenerChannels::Plan ListenerChannels::plan(const BrokerConfig& next, bool reload_modified) const {
  Plan plan;
  for (const auto& entry : builders_) {
    // Not a structured binding: the lambda below captures the name (clang 14).
    const std::string& name = entry.first;
    const auto& builder = entry.second;
    const security::SslFactory* tls = builder->ssl_factory();
    if (!tls) continue;
    security::SslConfigLookup lookup = [&next, &name](const std::string& key) { return listener_value(next, name, key); };
    try {
      if (auto rebuilt = tls->reconfigured(lookup, reload_modified)) plan.changes.emplace_back(name, builder->with_ssl(rebuilt));
    } catch (const security::SslConfigError& e) {
      plan.error = "Validation of dynamic config update of SSLFactory of listener " + name + " failed: " + e.what();
      plan.changes.clear();
      return plan;
    }
  }
  return plan;
}

void ListenerChannels::apply(Plan plan) {
  for (auto& [name, builder] : plan.changes) {
    builders_[name] = std::move(builder);
    RLOG_INFO("listener %s: new TLS key and trust stores serve the connections accepted from now on", name.c_str());
  }
}

}  // namespace runnel::broker
