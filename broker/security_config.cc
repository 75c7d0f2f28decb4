#include "broker/security_config.h"

#include <algorithm>
#include <array>
#include <string_view>

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

bool is_security_key(const std::string& key) {
  if (key.starts_with("ssl.") || key.starts_with("sasl.")) return true;
  // listener.name.<listener>.ssl.keystore.location,
  // listener.name.<listener>.<mechanism>.sasl.jaas.config, ...
  if (key.starts_with("listener.name.") &&
      (key.find(".ssl.") != std::string::npos || key.find(".sasl.") != std::string::npos))
    return true;
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
    if (it->second != "PLAINTEXT")
      throw ConfigError(std::string("Invalid configuration ") + key + ": listener " + l.name + " uses security protocol " +
                        it->second + ", which Runnel does not implement yet (only PLAINTEXT); refusing to start " +
                        "rather than serve it without encryption or authentication");
  }
}

}  // namespace

void refuse_unimplemented_security(const BrokerConfig& config, const std::map<std::string, std::string>& props) {
  const auto protocols = protocol_map(config);
  refuse_listeners(protocols, config.listeners(), "listeners");
  refuse_listeners(protocols, config.advertised_listeners(), "advertised.listeners");
  if (auto p = config.get_string("security.inter.broker.protocol"); p != "PLAINTEXT")
    throw ConfigError("Invalid configuration security.inter.broker.protocol=" + p +
                      ": Runnel does not implement security protocol " + p + " yet (only PLAINTEXT)");
  for (const auto& entry : props)
    if (is_security_key(entry.first))
      throw ConfigError("Unsupported configuration " + entry.first +
                        ": Runnel does not implement TLS or SASL yet; refusing to start rather " +
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

std::string listener_security_protocol(const BrokerConfig& config, const std::string& listener) {
  const auto protocols = protocol_map(config);
  auto it = protocols.find(listener);
  return it == protocols.end() ? "PLAINTEXT" : it->second;
}

}  // namespace runnel::broker
