// SaslAuthenticate (key 36) outside a SASL exchange (see 17_sasl_handshake.cc):
// Kafka's KafkaApis answers ILLEGAL_SASL_STATE with this message.
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::SaslAuthenticateResponse> handle<p::SaslAuthenticateApi>(RequestContext&, p::SaslAuthenticateRequest&) {
  p::SaslAuthenticateResponse resp;
  resp.error_code = p::code(p::ErrorCode::illegal_sasl_state);
  resp.error_message = "SaslAuthenticate request received after successful authentication";
  co_return resp;
}

}  // namespace runnel::broker
