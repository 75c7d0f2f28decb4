// The listeners' security protocols, and the security Runnel does not
// implement yet (SASL): a configuration that asks for it stops startup.
// Serving such a listener as plaintext with no authentication would let in
// everyone the configuration meant to keep out, which is worse than not
// starting.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "broker/config.h"

namespace boost::asio::ssl {
class context;
}
namespace runnel::security {
class ChannelBuilder;
}

namespace runnel::broker {

// Kafka's SecurityProtocol of each listener, through
// listener.security.protocol.map (Kafka's default map maps SSL, SASL_PLAINTEXT
// and SASL_SSL to themselves). Throws ConfigError naming the first listener
// whose protocol is SASL_PLAINTEXT or SASL_SSL, the first security key that
// is set and not implemented (sasl.*, listener.name.<name>.*sasl.*,
// ssl.engine.factory.class, ...), and a security.inter.broker.protocol
// Runnel cannot serve.
void refuse_unimplemented_security(const BrokerConfig& config, const std::map<std::string, std::string>& props);

// Whether authorizer.class.name turns the authorizer on: empty (Kafka's
// default) is no authorizer; Kafka's StandardAuthorizer or AclAuthorizer
// is Runnel's (security/authorizer/); any other class throws ConfigError.
bool authorizer_configured(const BrokerConfig& config);

// Kafka's ChannelBuilders.create for one listener: PLAINTEXT or SSL (its TLS
// context from the listener's ssl.* configs). Throws ConfigError naming the
// listener and the key when its TLS cannot be set up.
std::shared_ptr<const security::ChannelBuilder> channel_builder(const BrokerConfig& config,
                                                                const std::string& listener);

// The security protocol a listener speaks, through
// listener.security.protocol.map (which startup checked names every
// listener); PLAINTEXT for a name it lacks.
std::string listener_security_protocol(const BrokerConfig& config, const std::string& listener);

// The listener brokers replicate over: inter.broker.listener.name, else the
// listener named after security.inter.broker.protocol when that is set (as
// Kafka names it), else `fallback` (the first advertised listener).
std::string inter_broker_listener(const BrokerConfig& config, const std::string& fallback);

// TLS for the connections this broker opens to the others on `listener`
// (its replica fetchers), from that listener's ssl.* configs: nullptr when
// the listener is PLAINTEXT. Throws ConfigError naming the key.
std::shared_ptr<boost::asio::ssl::context> inter_broker_ssl_context(const BrokerConfig& config,
                                                                    const std::string& listener);

// A key's value for one listener: Kafka's per-listener override
// listener.name.<lower-case listener>.<key>, else the broker's value or
// Kafka's default (nullopt if null). For the ssl.* keys.
std::optional<std::string> listener_value(const BrokerConfig& config, const std::string& listener,
                                          const std::string& key);

}  // namespace runnel::broker
