// SaslHandshake (key 17) outside a SASL exchange: on a PLAINTEXT or SSL
// listener, or on an authenticated SASL connection that is not starting a
// re-authentication (broker/sasl_server_authenticator.h serves the exchange
// itself). Kafka's KafkaApis answers ILLEGAL_SASL_STATE.
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::SaslHandshakeResponse> handle<p::SaslHandshakeApi>(RequestContext&, p::SaslHandshakeRequest&) {
  p::SaslHandshakeResponse resp;
  resp.error_code = p::code(p::ErrorCode::illegal_sasl_state);
  co_return resp;
}

}  // namespace runnel::broker
