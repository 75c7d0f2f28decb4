// Every listener's ChannelBuilder (Kafka's channel builders, one per
// listener of the SocketServer), built from the broker's config at startup
// and rebuilt when a dynamic update changes a TLS listener's key store or
// trust store (Kafka's DynamicBrokerConfig with the listeners' SslFactory as
// ListenerReconfigurable). The acceptor asks for the builder at each
// accept, so a new store serves every connection accepted after it while
// open connections keep theirs.
//
// An update is planned against the whole new config first (every TLS
// listener's new stores read and checked, security/ssl_factory.h) and then
// applied, so a refused update changes no listener. Event-loop only.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "broker/config.h"
#include "broker/security_config.h"

namespace runnel::broker {

class ListenerChannels {
 public:
  // Throws ConfigError naming the listener and the key (startup stops).
  ListenerChannels(const BrokerConfig& config, ScramCredentialLookup scram);

  // The builder for a listener of the config; nullptr for a name it lacks.
  std::shared_ptr<const security::ChannelBuilder> get(const std::string& listener) const;

  struct Plan {
    std::vector<std::pair<std::string, std::shared_ptr<const security::ChannelBuilder>>> changes;
    std::string error;  // why the update is refused; empty when it is not
  };
  // What `next` makes of each TLS listener whose stores changed (with
  // `reload_modified`, also a store file rewritten under the same name).
  Plan plan(const BrokerConfig& next, bool reload_modified) const;
  void apply(Plan plan);

 private:
  std::map<std::string, std::shared_ptr<const security::ChannelBuilder>> builders_;
};

}  // namespace runnel::broker
