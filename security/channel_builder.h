// Kafka's ChannelBuilder: what a listener's security protocol makes of an
// accepted socket. It builds the connection's TransportLayer (plain or TLS)
// and, once the handshake is done, its principal (Kafka's
// DefaultKafkaPrincipalBuilder): User:<the client certificate's subject DN,
// through ssl.principal.mapping.rules>, or User:ANONYMOUS without one.
//
// SASL_PLAINTEXT and SASL_SSL will add their authentication exchange here;
// until then startup refuses them (broker/security_config.h).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "security/principal.h"
#include "security/ssl_engine_factory.h"
#include "security/ssl_principal_mapper.h"
#include "security/transport_layer.h"

namespace runnel::security {

class ChannelBuilder {
 public:
  // PLAINTEXT: no handshake, User:ANONYMOUS.
  static std::shared_ptr<const ChannelBuilder> plaintext();
  // SSL, from the listener's ssl.* configs; throws SslConfigError (a bad
  // key store, trust store, protocol or mapping rule) so startup stops.
  static std::shared_ptr<const ChannelBuilder> ssl(const SslConfigLookup& config);

  std::unique_ptr<TransportLayer> build(tcp::socket socket) const;

  // After a successful handshake: who the peer is. nullopt when its
  // certificate's DN matches no mapping rule (Kafka's NoMatchingRule,
  // which fails the connection).
  std::optional<KafkaPrincipal> principal(TransportLayer& transport) const;

  const std::string& security_protocol() const { return protocol_; }

 private:
  std::string protocol_ = "PLAINTEXT";
  std::shared_ptr<asio::ssl::context> ssl_context_;
  std::optional<SslPrincipalMapper> mapper_;
};

}  // namespace runnel::security
