// The listeners' security protocols and what each needs: TLS contexts,
// SASL mechanisms with their JAAS lines, the credentials brokers
// authenticate to each other with. A configuration Runnel cannot serve as
// asked stops startup: serving a listener with less security than it asks
// for would let in everyone the configuration meant to keep out.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "broker/config.h"
#include "security/sasl/sasl_client.h"
#include "security/sasl/scram_credential.h"
#include "security/ssl_factory.h"

namespace boost::asio::ssl {
class context;
}
namespace runnel::security {
class ChannelBuilder;
struct SaslServerConfig;
}  // namespace runnel::security

namespace runnel::broker {

// Kafka's startup checks of the security configuration: every listener has
// a protocol in listener.security.protocol.map (Kafka's default maps SSL,
// SASL_PLAINTEXT and SASL_SSL to themselves); every SASL listener's
// mechanisms are ones Runnel serves, each with its JAAS line; in a cluster
// the inter-broker listener is advertised and, when SASL, carries the
// broker's own credentials. Throws ConfigError naming the key, also for a
// security key set that Runnel does not implement (a custom callback
// handler, Kerberos, OAUTHBEARER JWKS, ssl.engine.factory.class, ...).
void refuse_unimplemented_security(const BrokerConfig& config, const std::map<std::string, std::string>& props);

// Where a SASL/SCRAM exchange finds a user's stored credential.
using ScramCredentialLookup =
    std::function<std::optional<security::sasl::ScramCredential>(const std::string&, security::sasl::ScramMechanism)>;

// One SASL listener's authentication: sasl.enabled.mechanisms (per
// listener: listener.name.<l>.sasl.enabled.mechanisms), each mechanism's
// JAAS line (listener.name.<l>.<mechanism>.sasl.jaas.config, as Kafka's
// brokers require), connections.max.reauth.ms per mechanism, and
// sasl.server.max.receive.size. Throws ConfigError.
security::SaslServerConfig sasl_server_config(const BrokerConfig& config, const std::string& listener,
                                              ScramCredentialLookup scram);

// How this broker authenticates to the others on a SASL inter-broker
// listener: sasl.mechanism.inter.broker.protocol (enabled on that
// listener) with the username and password options of that mechanism's
// JAAS line, as Kafka's brokers do. nullopt when the listener is not SASL.
std::optional<security::sasl::SaslCredentials> inter_broker_sasl(const BrokerConfig& config, const std::string& listener);

// Whether authorizer.class.name turns the authorizer on: empty (Kafka's
// default) is no authorizer; Kafka's StandardAuthorizer or AclAuthorizer
// is Runnel's (security/authorizer/); any other class throws ConfigError.
bool authorizer_configured(const BrokerConfig& config);

// Kafka's ChannelBuilders.create for one listener: PLAINTEXT, SSL (its TLS
// context from the listener's ssl.* configs), SASL_PLAINTEXT or SASL_SSL
// (sasl_server_config, SCRAM credentials through `scram`). Throws
// ConfigError naming the listener and the key when it cannot be set up.
std::shared_ptr<const security::ChannelBuilder> channel_builder(const BrokerConfig& config, const std::string& listener,
                                                                ScramCredentialLookup scram);

// How a listener's TLS takes a dynamic key store update
// (security/ssl_factory.h): validated by handshakes on a cluster's
// inter-broker listener; ssl.allow.dn.changes and ssl.allow.san.changes.
security::SslFactory::Options ssl_factory_options(const BrokerConfig& config, const std::string& listener);

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
// the listener is PLAINTEXT or SASL_PLAINTEXT. Throws ConfigError naming the key.
std::shared_ptr<boost::asio::ssl::context> inter_broker_ssl_context(const BrokerConfig& config,
                                                                    const std::string& listener);

// A key's value for one listener: Kafka's per-listener override
// listener.name.<lower-case listener>.<key>, else the broker's value or
// Kafka's default (nullopt if null). For the ssl.* keys.
std::optional<std::string> listener_value(const BrokerConfig& config, const std::string& listener,
                                          const std::string& key);

}  // namespace runnel::broker
