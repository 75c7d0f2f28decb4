#include "security/channel_builder.h"

namespace runnel::security {

std::shared_ptr<const ChannelBuilder> ChannelBuilder::plaintext() { return std::make_shared<ChannelBuilder>(); }

std::shared_ptr<const ChannelBuilder> ChannelBuilder::ssl(const SslConfigLookup& config, SslFactory::Options options) {
  auto b = std::make_shared<ChannelBuilder>();
  b->protocol_ = "SSL";
  b->ssl_ = SslFactory::create(config, options);
  try {
    b->mapper_.emplace(config("ssl.principal.mapping.rules").value_or("DEFAULT"));
  } catch (const std::invalid_argument& e) {
    throw SslConfigError(std::string("Invalid value for configuration ssl.principal.mapping.rules: ") + e.what());
  }
  return b;
}

std::shared_ptr<const ChannelBuilder> ChannelBuilder::sasl(SaslServerConfig sasl, const SslConfigLookup* tls,
                                                           SslFactory::Options options) {
  auto b = std::make_shared<ChannelBuilder>();
  b->protocol_ = tls ? "SASL_SSL" : "SASL_PLAINTEXT";
  if (tls) b->ssl_ = SslFactory::create(*tls, options);
  b->sasl_ = std::move(sasl);
  return b;
}

std::shared_ptr<const ChannelBuilder> ChannelBuilder::with_ssl(std::shared_ptr<const SslFactory> ssl) const {
  auto b = std::make_shared<ChannelBuilder>(*this);
  b->ssl_ = std::move(ssl);
  return b;
}

std::unique_ptr<TransportLayer> ChannelBuilder::build(tcp::socket socket) const {
  if (ssl_) return std::make_unique<SslTransportLayer>(std::move(socket), ssl_->context());
  return std::make_unique<PlaintextTransportLayer>(std::move(socket));
}

std::optional<KafkaPrincipal> ChannelBuilder::principal(TransportLayer& transport) const {
  // SASL names the principal once its exchange completes; until then the
  // connection is anonymous (and may only authenticate).
  if (sasl_) return kAnonymousPrincipal;
  auto dn = transport.peer_subject();
  // No certificate (ssl.client.auth none, or requested and none sent):
  // Kafka's SSLPeerUnverifiedException case, User:ANONYMOUS.
  if (!dn || !mapper_) return kAnonymousPrincipal;
  auto name = mapper_->name(*dn);
  if (!name) return std::nullopt;
  return KafkaPrincipal{"User", *name};
}

}  // namespace runnel::security
