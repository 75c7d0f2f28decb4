#include "broker/security_config.h"

#include <algorithm>
#include <array>
#include <string_view>

#include "base/clock.h"
#include "broker/logging.h"
#include "security/channel_builder.h"
#include "security/sasl/jaas_config.h"

namespace runnel::broker {

namespace {

constexpr std::array<std::string_view, 4> kSecurityProtocols = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};

// Keys of Kafka's authentication that are not ssl.* or sasl.*: each
// changes who may do what, so none can be ignored.
constexpr std::array<std::string_view, 4> kSecurityKeys = {
    "principal.builder.class", "security.providers", "delegation.token.secret.key", "delegation.token.master.key",
};

// The SASL mechanisms security/sasl/ implements, and the JAAS login module
// each takes its options from.
constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kSaslMechanisms = {{
    {"PLAIN", security::sasl::kPlainLoginModule},
    {"SCRAM-SHA-256", security::sasl::kScramLoginModule},
    {"SCRAM-SHA-512", security::sasl::kScramLoginModule},
    {"OAUTHBEARER", security::sasl::kOAuthBearerLoginModule},
}};

// The authorizers whose behaviour security/authorizer/ implements: KRaft's
// and ZooKeeper-era Kafka's, which decide alike.
constexpr std::array<std::string_view, 2> kAuthorizerClasses = {
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "kafka.security.authorizer.AclAuthorizer",
};

bool is_sasl(const std::string& protocol) { return protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL"; }

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

// A security key Runnel cannot act on: refused unless the broker's config
// accepted it (the SASL keys Runnel implements, per listener and mechanism
// too). What stays refused: a Java SslEngineFactory in place of OpenSSL,
// custom SASL callback handlers and login classes, Kerberos, OAUTHBEARER's
// JWKS validation (sasl.oauthbearer.*), custom principal builders.
bool is_security_key(const std::string& key) {
  if (key.ends_with("ssl.engine.factory.class")) return true;
  if (key.starts_with("sasl.") || key.find(".sasl.") != std::string::npos) return true;
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

void check_listeners(const std::map<std::string, std::string>& protocols, const std::vector<Listener>& listeners,
                     const char* key) {
  for (const auto& l : listeners)
    if (!protocols.count(l.name))
      throw ConfigError(std::string("Invalid configuration ") + key + ": no security protocol defined for listener " +
                        l.name + " in listener.security.protocol.map");
}

// A SASL key for one listener and mechanism, as Kafka's JaasContext and
// SaslChannelBuilder read them: listener.name.<listener>.<mechanism>.<key>,
// then (except the JAAS line) listener.name.<listener>.<key>, then the
// broker's value.
std::optional<std::string> mechanism_value(const BrokerConfig& config, const std::string& listener,
                                           const std::string& mechanism, const std::string& key) {
  const std::string prefixed = "listener.name." + lower(listener) + "." + lower(mechanism) + "." + key;
  if (config.is_set(prefixed)) return config.get_optional(prefixed);
  if (key == "sasl.jaas.config") return std::nullopt;
  return listener_value(config, listener, key);
}

// The JAAS entry of one listener's mechanism: Kafka requires one for every
// enabled mechanism. Runnel reads no JAAS file
// (java.security.auth.login.config), only the sasl.jaas.config keys.
security::sasl::JaasLoginModule jaas_entry(const BrokerConfig& config, const std::string& listener,
                                           const std::string& mechanism, std::string_view login_module) {
  const std::string key = "listener.name." + lower(listener) + "." + lower(mechanism) + ".sasl.jaas.config";
  auto text = mechanism_value(config, listener, mechanism, "sasl.jaas.config");
  if (!text)
    throw ConfigError("Could not find a 'KafkaServer' or '" + lower(listener) +
                      ".KafkaServer' entry in the JAAS configuration of listener " + listener + " for mechanism " +
                      mechanism + ": set " + key + " (Runnel reads no JAAS file)");
  std::vector<security::sasl::JaasLoginModule> entries;
  try {
    entries = security::sasl::parse_jaas_config(*text);
  } catch (const security::sasl::JaasConfigError& e) {
    throw ConfigError("Invalid value for configuration " + key + ": " + e.what());
  }
  for (auto& e : entries)
    if (e.login_module == login_module) return std::move(e);
  throw ConfigError("Invalid value for configuration " + key + ": mechanism " + mechanism + " needs " +
                    std::string(login_module) + ", not " + entries.front().login_module);
}

// sasl.enabled.mechanisms of one listener, each once, in the order given;
// throws ConfigError for none (Kafka's "No SASL mechanisms are enabled").
std::vector<std::string> enabled_mechanisms(const BrokerConfig& config, const std::string& listener) {
  const std::string key = "sasl.enabled.mechanisms";
  std::vector<std::string> out;
  for (const auto& m : parse_list(listener_value(config, listener, key).value_or("")))
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(m);
  if (out.empty())
    throw ConfigError("Invalid configuration " + key + " of listener " + listener + ": No SASL mechanisms are enabled");
  return out;
}

std::string_view login_module_of(const std::string& mechanism) {
  for (auto [name, module] : kSaslMechanisms)
    if (name == mechanism) return module;
  return {};
}

}  // namespace

void refuse_unimplemented_security(const BrokerConfig& config, const std::map<std::string, std::string>& props) {
  const auto protocols = protocol_map(config);
  check_listeners(protocols, config.listeners(), "listeners");
  check_listeners(protocols, config.advertised_listeners(), "advertised.listeners");
  for (const auto& entry : props)
    if (is_security_key(entry.first) && !config.is_set(entry.first))
      throw ConfigError("Unsupported configuration " + entry.first +
                        ": Runnel does not implement it (it serves PLAIN, SCRAM-SHA-256/512 and OAUTHBEARER with " +
                        "Kafka's unsecured validator, from sasl.jaas.config keys); refusing to start rather than " +
                        "ignore a security setting");
  // Every SASL listener's mechanisms and JAAS lines, as its channel builder
  // will read them, so a mistake stops startup here.
  for (const auto& l : config.listeners()) {
    if (!is_sasl(listener_security_protocol(config, l.name))) continue;
    sasl_server_config(config, l.name, nullptr);
    if (config.is_set("sasl.jaas.config") || config.is_set("listener.name." + lower(l.name) + ".sasl.jaas.config"))
      RLOG_WARN("Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config "
                "(listener %s: use listener.name.%s.<mechanism>.sasl.jaas.config)",
                l.name.c_str(), lower(l.name).c_str());
  }
  // A cluster's followers fetch over the inter-broker listener, which must
  // be one this broker advertises, and authenticate on it when it is SASL.
  if (!config.get_list("runnel.etcd.endpoints").empty()) {
    const auto advertised = config.advertised_listeners();
    const std::string ibl = inter_broker_listener(config, advertised.empty() ? std::string() : advertised.front().name);
    bool found = false;
    for (const auto& l : advertised) found = found || l.name == ibl;
    if (!found)
      throw ConfigError("Invalid configuration: the inter-broker listener " + ibl +
                        " is not among the advertised listeners");
    inter_broker_sasl(config, ibl);
  }
}

security::SaslServerConfig sasl_server_config(const BrokerConfig& config, const std::string& listener,
                                              ScramCredentialLookup scram) {
  security::SaslServerConfig out;
  const std::string mechanisms_key = "sasl.enabled.mechanisms";
  out.enabled_mechanisms = enabled_mechanisms(config, listener);
  for (const auto& mechanism : out.enabled_mechanisms) {
    const std::string_view module = login_module_of(mechanism);
    if (module.empty())
      throw ConfigError("Invalid configuration " + mechanisms_key + " of listener " + listener + ": mechanism " +
                        mechanism + (mechanism == "GSSAPI" ? " (Kerberos, Kafka's default)" : "") +
                        " is not implemented in Runnel; it serves PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER");
    auto jaas = jaas_entry(config, listener, mechanism, module);
    security::sasl::SaslServerCallbacks callbacks;
    if (mechanism == security::sasl::kPlain) callbacks.plain_users = jaas.options;
    if (mechanism == security::sasl::kOAuthBearer) {
      // Kafka's unsecured validator refuses a bad clock skew when it is
      // configured, not on every token.
      if (auto skew = jaas.options.find("unsecuredValidatorAllowableClockSkewMs"); skew != jaas.options.end()) {
        const auto& v = skew->second;
        if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18)
          throw ConfigError("Invalid value for configuration listener.name." + lower(listener) +
                            ".oauthbearer.sasl.jaas.config: unsecuredValidatorAllowableClockSkewMs must be a "
                            "non-negative integer: " + v);
      }
      callbacks.oauthbearer_options = jaas.options;
    }
    callbacks.scram_credential = scram;
    callbacks.now_ms = [] { return Clock::system().wall_ms(); };
    out.callbacks.emplace(mechanism, std::move(callbacks));
    const std::string reauth = mechanism_value(config, listener, mechanism, "connections.max.reauth.ms").value_or("0");
    int64_t reauth_ms = 0;
    try {
      reauth_ms = std::stoll(reauth);
    } catch (const std::exception&) {
      throw ConfigError("Invalid value " + reauth + " for configuration connections.max.reauth.ms of listener " +
                        listener + ": Not a number of type LONG");
    }
    out.max_reauth_ms.emplace(mechanism, reauth_ms);
  }
  out.max_receive_size = static_cast<int32_t>(std::stol(listener_value(config, listener, "sasl.server.max.receive.size").value_or("524288")));
  return out;
}

std::optional<security::sasl::SaslCredentials> inter_broker_sasl(const BrokerConfig& config, const std::string& listener) {
  if (!is_sasl(listener_security_protocol(config, listener))) return std::nullopt;
  const std::string key = "sasl.mechanism.inter.broker.protocol";
  const std::string mechanism = config.get_string(key);
  const auto enabled = enabled_mechanisms(config, listener);
  if (std::find(enabled.begin(), enabled.end(), mechanism) == enabled.end())
    throw ConfigError(key + " must be included in sasl.enabled.mechanisms when SASL is used for inter-broker " +
                      "communication (listener " + listener + ")");
  if (mechanism != security::sasl::kPlain && security::sasl::scram_mechanism_from_name(mechanism) == security::sasl::ScramMechanism::unknown)
    throw ConfigError("Invalid configuration " + key + "=" + mechanism +
                      ": brokers authenticate to each other with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 in Runnel");
  auto jaas = jaas_entry(config, listener, mechanism, login_module_of(mechanism));
  auto user = jaas.options.find("username");
  auto password = jaas.options.find("password");
  if (user == jaas.options.end() || password == jaas.options.end())
    throw ConfigError("Invalid value for configuration listener.name." + lower(listener) + "." + lower(mechanism) +
                      ".sasl.jaas.config: the inter-broker mechanism needs the broker's own username and password options");
  return security::sasl::SaslCredentials{mechanism, user->second, password->second};
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

std::shared_ptr<const security::ChannelBuilder> channel_builder(const BrokerConfig& config, const std::string& listener,
                                                                ScramCredentialLookup scram) {
  const std::string protocol = listener_security_protocol(config, listener);
  if (protocol == "PLAINTEXT") return security::ChannelBuilder::plaintext();
  security::SslConfigLookup lookup = [&config, listener](const std::string& key) {
    return listener_value(config, listener, key);
  };
  const security::SslFactory::Options tls = ssl_factory_options(config, listener);
  try {
    if (protocol == "SASL_PLAINTEXT")
      return security::ChannelBuilder::sasl(sasl_server_config(config, listener, scram), nullptr, tls);
    if (protocol == "SASL_SSL") return security::ChannelBuilder::sasl(sasl_server_config(config, listener, scram), &lookup, tls);
    return security::ChannelBuilder::ssl(lookup, tls);
  } catch (const security::SslConfigError& e) {
    throw ConfigError("Invalid SSL configuration of listener " + listener + ": " + e.what());
  }
}

security::SslFactory::Options ssl_factory_options(const BrokerConfig& config, const std::string& listener) {
  security::SslFactory::Options o;
  // Kafka validates a new key store by handshakes on the listener brokers
  // replicate over; a single node has no peer to keep trusting it.
  const auto listeners = config.advertised_listeners();
  o.inter_broker = !config.get_list("runnel.etcd.endpoints").empty() && !listeners.empty() &&
                   inter_broker_listener(config, listeners.front().name) == listener;
  o.allow_dn_changes = listener_value(config, listener, "ssl.allow.dn.changes") == "true";
  o.allow_san_changes = listener_value(config, listener, "ssl.allow.san.changes") == "true";
  return o;
}

std::string listener_security_protocol(const BrokerConfig& config, const std::string& listener) {
  const auto protocols = protocol_map(config);
  auto it = protocols.find(listener);
  return it == protocols.end() ? "PLAINTEXT" : it->second;
}

std::optional<std::string> listener_value(const BrokerConfig& config, const std::string& listener,
                                          const std::string& key) {
  const std::string prefixed = "listener.name." + lower(listener) + "." + key;
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
  const std::string protocol = listener_security_protocol(config, listener);
  if (protocol != "SSL" && protocol != "SASL_SSL") return nullptr;
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
