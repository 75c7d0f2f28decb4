// Kafka's JaasConfig: the `sasl.jaas.config` value, one or more
// `<LoginModuleClass> <required|requisite|sufficient|optional> key=value ...;`
// entries, values bare or double-quoted (with \" and \\ inside quotes), as
// Java's JAAS ConfigFile tokenizer reads them. For example
//   org.apache.kafka.common.security.plain.PlainLoginModule required
//     username="admin" password="admin-secret" user_alice="alice-secret";
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace runnel::security::sasl {

struct JaasLoginModule {
  std::string login_module;  // the class name
  std::string control_flag;  // required, requisite, sufficient or optional
  std::map<std::string, std::string> options;
};

// What Kafka's JaasConfig throws as IllegalArgumentException, message
// included ("JAAS config entry not terminated by semi-colon", ...).
struct JaasConfigError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Throws JaasConfigError for anything that is not such a list, and for an
// empty one.
std::vector<JaasLoginModule> parse_jaas_config(const std::string& text);

// Kafka's login module classes per mechanism.
inline constexpr const char* kPlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule";
inline constexpr const char* kScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule";
inline constexpr const char* kOAuthBearerLoginModule =
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule";

}  // namespace runnel::security::sasl
