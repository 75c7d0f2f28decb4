// Kafka's KafkaPrincipal: who a connection is, as ACLs name it ("User:alice").
// A connection starts as User:ANONYMOUS, Kafka's principal for PLAINTEXT and
// for an SSL client without a certificate; a TLS client certificate (through
// ssl.principal.mapping.rules) or a SASL authentication replaces it.
#pragma once

#include <string>

namespace runnel::security {

struct KafkaPrincipal {
  std::string type = "User";  // Kafka's KafkaPrincipal.USER_TYPE
  std::string name = "ANONYMOUS";

  std::string to_string() const { return type + ":" + name; }
  bool operator==(const KafkaPrincipal&) const = default;
};

inline const KafkaPrincipal kAnonymousPrincipal{};

}  // namespace runnel::security
