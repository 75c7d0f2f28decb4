// Security Runnel does not implement yet (TLS, SASL): a configuration
// that asks for it stops startup. Serving such a listener as plaintext with
// no authentication would let in everyone the configuration meant to keep
// out, which is worse than not starting.
#pragma once

#include <map>
#include <string>

#include "broker/config.h"

namespace runnel::broker {

// Kafka's SecurityProtocol of each listener, through
// listener.security.protocol.map (Kafka's default map maps SSL, SASL_PLAINTEXT
// and SASL_SSL to themselves). Throws ConfigError naming the first listener
// whose protocol is not PLAINTEXT and the first security key that is set
// (ssl.*, sasl.*, listener.name.<name>.ssl|sasl.*, a security.inter.broker.protocol other than PLAINTEXT, ...).
void refuse_unimplemented_security(const BrokerConfig& config, const std::map<std::string, std::string>& props);

// Whether authorizer.class.name turns the authorizer on: empty (Kafka's
// default) is no authorizer; Kafka's StandardAuthorizer or AclAuthorizer
// is Runnel's (security/authorizer/); any other class throws ConfigError.
bool authorizer_configured(const BrokerConfig& config);

// The security protocol a listener speaks, through
// listener.security.protocol.map (which startup checked names every
// listener); PLAINTEXT for a name it lacks.
std::string listener_security_protocol(const BrokerConfig& config, const std::string& listener);

}  // namespace runnel::broker
