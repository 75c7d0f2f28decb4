// Kafka's ChannelBuilder: what a listener's security protocol makes of an
// accepted socket. It builds the connection's TransportLayer (plain or TLS)
// and, once the handshake is done, its principal (Kafka's
// DefaultKafkaPrincipalBuilder): User:<the client certificate's subject DN,
// through ssl.principal.mapping.rules>, or User:ANONYMOUS without one.
//
// SASL_PLAINTEXT and SASL_SSL add an authentication exchange after the
// transport's (broker/sasl_server_authenticator.h drives it with the
// mechanisms and credentials held here); its authorization id is then the
// principal, User:<name>, on SASL_SSL too.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "security/principal.h"
#include "security/sasl/sasl_server.h"
#include "security/ssl_engine_factory.h"
#include "security/ssl_factory.h"
#include "security/ssl_principal_mapper.h"
#include "security/transport_layer.h"

namespace runnel::security {

// A SASL listener's authentication: Kafka's sasl.enabled.mechanisms, each
// mechanism's callbacks (its JAAS options, the SCRAM store), and
// connections.max.reauth.ms per mechanism (KIP-368; 0: sessions never
// expire unless the credential does).
struct SaslServerConfig {
  std::vector<std::string> enabled_mechanisms;
  std::map<std::string, sasl::SaslServerCallbacks> callbacks;
  std::map<std::string, int64_t> max_reauth_ms;
  // sasl.server.max.receive.size: the largest frame read before
  // authentication completes.
  int32_t max_receive_size = 524288;
};

class ChannelBuilder {
 public:
  // PLAINTEXT: no handshake, User:ANONYMOUS.
  static std::shared_ptr<const ChannelBuilder> plaintext();
  // SSL, from the listener's ssl.* configs; throws SslConfigError (a bad
  // key store, trust store, protocol or mapping rule) so startup stops.
  static std::shared_ptr<const ChannelBuilder> ssl(const SslConfigLookup& config, SslFactory::Options options);
  // SASL_PLAINTEXT (`tls` null) or SASL_SSL (TLS from the listener's
  // ssl.* configs, throwing SslConfigError as ssl() does).
  static std::shared_ptr<const ChannelBuilder> sasl(SaslServerConfig sasl, const SslConfigLookup* tls,
                                                    SslFactory::Options options);

  // The listener's TLS (nullptr for PLAINTEXT and SASL_PLAINTEXT), and this
  // builder with its TLS replaced (a dynamic key store update: connections
  // accepted from then on get the new context).
  const SslFactory* ssl_factory() const { return ssl_.get(); }
  std::shared_ptr<const ChannelBuilder> with_ssl(std::shared_ptr<const SslFactory> ssl) const;

  std::unique_ptr<TransportLayer> build(tcp::socket socket) const;

  // After a successful handshake: who the peer is. nullopt when its
  // certificate's DN matches no mapping rule (Kafka's NoMatchingRule,
  // which fails the connection).
  std::optional<KafkaPrincipal> principal(TransportLayer& transport) const;

  const std::string& security_protocol() const { return protocol_; }
  // The SASL exchange this listener requires; nullptr for PLAINTEXT and SSL.
  const SaslServerConfig* sasl() const { return sasl_ ? &*sasl_ : nullptr; }

 private:
  std::string protocol_ = "PLAINTEXT";
  std::shared_ptr<const SslFactory> ssl_;
  std::optional<SslPrincipalMapper> mapper_;
  std::optional<SaslServerConfig> sasl_;
};

}  // namespace runnel::security
