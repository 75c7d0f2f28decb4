#include "broker/security_config.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "security/channel_builder.h"

namespace runnel::broker {

namespace {

constexpr std::array<std::string_view, 4> kSecurityProtocols = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};

// Keys of Kafka's authentication that are not ssl.* or sasl.*: each
// changes who may do what, so none can be ignored.
constexpr std::array<std::string_view, 5> kSecurityKeys = {
    "principal.builder.class", "security.providers", "connections.max.reauth.ms",
    "delegation.token.secret.key", "delegation.token.master.key",
};

// The authorizers whose behaviour security/authorizer/ implements: KRaft's
// and ZooKeeper-era Kafka's, which decide alike.
constexpr std::array<std::string_view, 2> kAuthorizerClasses = {
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
};

// The security protocols a listener may use today.
bool is_implemented(const std::string& protocol) { return protocol == "PLAINTEXT" || protocol == "SSL"; }

bool is_security_key(const std::string& key) {
  // TLS is served (ssl.*), except through a Java SslEngineFactory in place
  // of OpenSSL, here or per listener.
  if (key.ends_with("ssl.engine.factory.class")) return true;
  if (key.starts_with("sasl.")) return true;
  // listener.name.<listener>.<mechanism>.sasl.jaas.config, ...
  if (key.starts_with("listener.name.") && key.find(".sasl.") != std::string::npos) return true;
  return std::find(kSecurityKeys.begin(), kSecurityKeys.end(), key) != kSecurityKeys.end();
}

// listener.security.protocol.map: NAME:PROTOCOL pairs, as Kafka parses them.
std::map<std::string, std::string> protocol_map(const BrokerConfig& config) {
  const std::string key = "listener.security.protocol.map";
  std::map<std::string, std::string> out;
  for (const auto& entry : config.get_list(key)) {
    auto colon = entry.find(':');
    std::string name = entry.substr(0, colon);
    std::string protocol = colon == std::string::npos ? "" : entry.substr(colon + 1);
    if (std::find(kSecurityProtocols.begin(), kSecurityProtocols.end(), protocol) == kSecurityProtocols.end())
      throw ConfigError("Invalid value " + config.get_string(key) + " for configuration " + key +
                        ": No enum constant for security protocol in " + entry);
    out[name] = protocol;
  }
  return out;
}

void refuse_listeners(const std::map<std::string, std::string>& protocols, const std::vector<Listener>& listeners,
                      const char* key) {
  for (const auto& l : listeners) {
    auto it = protocols.find(l.name);
    if (it == protocols.end())
      throw ConfigError(std::string("Invalid configuration ") + key + ": no security protocol defined for listener " +
                        l.name + " in listener.security.protocol.map");
    if (!is_implemented(it->second))
      throw ConfigError(std::string("Invalid configuration ") + key + ": listener " + l.name + " uses security protocol " +
                        it->second + ": SASL is not yet implemented in Runnel (only PLAINTEXT and SSL); refusing " +
                        "to start rather than serve it without authentication");
  }
}

}  // namespace

void refuse_unimplemented_security(const BrokerConfig& config, const std::map<std::string, std::string>& props) {
  const auto protocols = protocol_map(config);
  refuse_listeners(protocols, config.listeners(), "listeners");
  refuse_listeners(protocols, config.advertised_listeners(), "advertised.listeners");
  if (auto p = config.get_string("security.inter.broker.protocol"); !is_implemented(p))
    throw ConfigError("Invalid configuration security.inter.broker.protocol=" + p +
                      ": SASL is not yet implemented in Runnel; brokers replicate over PLAINTEXT or SSL");
  // A cluster's followers fetch over the inter-broker listener, which must
  // be one this broker advertises.
  if (!config.get_list("runnel.etcd.endpoints").empty()) {
    const auto advertised = config.advertised_listeners();
    const std::string ibl = inter_broker_listener(config, advertised.empty() ? std::string() : advertised.front().name);
    bool found = false;
    for (const auto& l : advertised) found = found || l.name == ibl;
    if (!found)
      throw ConfigError("Invalid configuration: the inter-broker listener " + ibl +
                        " is not among the advertised listeners");
  }
  for (const auto& entry : props)
    if (is_security_key(entry.first))
      throw ConfigError("Unsupported configuration " + entry.first +
                        ": Runnel does not implement SASL yet; refusing to start rather " +
                        "than ignore a security setting");
}

bool authorizer_configured(const BrokerConfig& config) {
  const std::string name = config.get_string("authorizer.class.name");
  if (name.empty()) return false;
  if (std::find(kAuthorizerClasses.begin(), kAuthorizerClasses.end(), name) == kAuthorizerClasses.end())
    throw ConfigError("Invalid value " + name + " for configuration authorizer.class.name: Runnel implements " +
                      std::string(kAuthorizerClasses[0]) + " (and " + std::string(kAuthorizerClasses[1]) +
                      ", which authorizes alike), not this class");
  return true;
}

std::shared_ptr<const security::ChannelBuilder> channel_builder(const BrokerConfig& config,
                                                                const std::string& listener) {
  const std::string protocol = listener_security_protocol(config, listener);
  if (protocol == "PLAINTEXT") return security::ChannelBuilder::plaintext();
  if (protocol != "SSL")
    throw ConfigError("listener " + listener + " uses security protocol " + protocol +
                      ": SASL is not yet implemented in Runnel");
  security::SslConfigLookup lookup = [&config, listener](const std::string& key) {
    return listener_value(config, listener, key);
  };
  try {
    return security::ChannelBuilder::ssl(lookup);
  } catch (const security::SslConfigError& e) {
    throw ConfigError("Invalid SSL configuration of listener " + listener + ": " + e.what());
  }
}

std::string listener_security_protocol(const BrokerConfig& config, const std::string& listener) {
  const auto protocols = protocol_map(config);
  auto it = protocols.find(listener);
  return it == protocols.end() ? "PLAINTEXT" : it->second;
}

std::optional<std::string> listener_value(const BrokerConfig& config, const std::string& listener,
                                          const std::string& key) {
  std::string lower = listener;
  std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
  const std::string prefixed = "listener.name." + lower + "." + key;
  // BrokerConfig::from keeps a per-listener ssl.* key under its full name.
  if (config.is_set(prefixed)) return config.get_optional(prefixed);
  return config.get_optional(key);
}

std::string inter_broker_listener(const BrokerConfig& config, const std::string& fallback) {
  if (auto name = config.get_optional("inter.broker.listener.name")) return *name;
  if (config.is_set("security.inter.broker.protocol")) return config.get_string("security.inter.broker.protocol");
  return fallback;
}

std::shared_ptr<boost::asio::ssl::context> inter_broker_ssl_context(const BrokerConfig& config,
                                                                    const std::string& listener) {
  if (listener_security_protocol(config, listener) != "SSL") return nullptr;
  security::SslConfigLookup lookup = [&config, listener](const std::string& key) {
    return listener_value(config, listener, key);
  };
  try {
    return security::create_client_ssl_context(lookup);
  } catch (const security::SslConfigError& e) {
    throw ConfigError("Invalid SSL configuration of the inter-broker listener " + listener + ": " + e.what());
  }
}

}  // namespace runnel::broker
