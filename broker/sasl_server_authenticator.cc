#include "broker/sasl_server_authenticator.h"

#include <algorithm>

#include "base/clock.h"
#include "broker/api_registry.h"
#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/error_codes.h"
#include "protocol/header.h"
#include "protocol/messages/17_sasl_handshake.h"
#include "protocol/messages/36_sasl_authenticate.h"

namespace runnel::broker {

namespace proto = runnel::protocol;

namespace {

// Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a client cannot
// make the broker run its (deliberately slow) SCRAM derivations more often.
constexpr auto kMinReauthInterval = std::chrono::seconds(1);

template <typename Api>
proto::Bytes encode_response(const proto::RequestHeader& header, const typename Api::Response& response) {
  proto::Bytes out;
  proto::Writer w(out);
  const int16_t v = header.api_version;
  proto::ResponseHeader{header.correlation_id, {}}.encode(w, proto::response_header_version(Api::key, Api::is_flexible(v)));
  response.encode(w, v);
  return out;
}

}  // namespace

SaslServerAuthenticator::SaslServerAuthenticator(const security::SaslServerConfig& config) : config_(config) {}

SaslServerAuthenticator::Outcome SaslServerAuthenticator::fail(std::string why, std::optional<proto::Bytes> response) {
  Outcome o;
  o.response = std::move(response);
  o.close = true;
  o.failure = std::move(why);
  state_ = State::complete;
  return o;
}

SaslServerAuthenticator::Outcome SaslServerAuthenticator::on_frame(proto::ByteView frame) {
  switch (state_) {
    case State::initial:
    case State::handshake:
      return handle_kafka_request(frame);
    case State::authenticate:
      return handle_authenticate(frame);
    case State::raw_tokens:
      return handle_raw_token(frame);
    case State::complete:
      break;
  }
  return fail("frame after the SASL exchange ended");
}

SaslServerAuthenticator::Outcome SaslServerAuthenticator::handle_kafka_request(proto::ByteView frame) {
  auto peek = proto::peek_header(frame);
  // Kafka: "Invalid request, potential reasons: kafka client configured with
  // the wrong security protocol, it does not support KIP-43 or it is not a
  // kafka client." The likeliest: a PLAINTEXT or SSL client on this port.
  const char* hint = state_ == State::initial
                         ? " (potential reasons: kafka client configured with the wrong security protocol, it does "
                           "not support KIP-43 or it is not a kafka client)"
                         : "";
  if (!peek) return fail(std::string("invalid request during SASL handshake") + hint);
  if (peek->api_key == proto::kApiVersionsKey) {
    // Kafka allows it only first (HANDSHAKE_OR_VERSIONS_REQUEST). A version
    // it does not know gets the UNSUPPORTED_VERSION answer (KIP-511) and
    // leaves that state, so the client can retry at one it does: franz-go
    // asks at v5 first.
    if (state_ != State::initial || reauthenticating())
      return fail("unexpected ApiVersions request during SASL authentication");
    const ApiRoute* route = find_route(proto::kApiVersionsKey);
    if (route && route->supports(peek->api_version)) state_ = State::handshake;
    Outcome o;
    o.serve_api_versions = true;
    return o;
  }
  if (peek->api_key != proto::SaslHandshakeApi::key) {
    const ApiRoute* route = find_route(peek->api_key);
    return fail(std::string("unexpected Kafka request of type ") + (route ? route->name : std::to_string(peek->api_key)) +
                " during SASL handshake" + hint);
  }
  if (peek->api_version < proto::SaslHandshakeApi::min_version || peek->api_version > proto::SaslHandshakeApi::max_version)
    return fail("unsupported SaslHandshake version " + std::to_string(peek->api_version));
  proto::Reader r(frame);
  proto::RequestHeader header;
  header.decode(r, proto::request_header_version(false));
  proto::SaslHandshakeRequest request;
  request.decode(r, header.api_version);
  if (!r.ok()) return fail("malformed SaslHandshake request");

  proto::SaslHandshakeResponse response;
  response.mechanisms = config_.enabled_mechanisms;
  const auto& enabled = config_.enabled_mechanisms;
  if (std::find(enabled.begin(), enabled.end(), request.mechanism) == enabled.end()) {
    response.error_code = proto::code(proto::ErrorCode::unsupported_sasl_mechanism);
    return fail("Unsupported SASL mechanism " + request.mechanism, encode_response<proto::SaslHandshakeApi>(header, response));
  }
  Outcome o;
  o.response = encode_response<proto::SaslHandshakeApi>(header, response);
  if (previous_ && previous_->mechanism != request.mechanism) {
    // Kafka answers the handshake, then fails the first token
    // (REAUTH_BAD_MECHANISM) so the failure is counted as a re-authentication's.
    mechanism_ = request.mechanism;
    server_.reset();
  } else {
    mechanism_ = request.mechanism;
    auto callbacks = config_.callbacks.find(mechanism_);
    if (callbacks != config_.callbacks.end()) server_ = security::sasl::create_sasl_server(mechanism_, callbacks->second);
    // Startup refuses an enabled mechanism Runnel cannot serve, so this is
    // a broken invariant, answered as the unsupported mechanism it is.
    if (!server_) {
      response.error_code = proto::code(proto::ErrorCode::unsupported_sasl_mechanism);
      return fail("no SASL server for mechanism " + mechanism_, encode_response<proto::SaslHandshakeApi>(header, response));
    }
  }
  // v1: tokens in SaslAuthenticate (KIP-152); v0: raw frames.
  state_ = header.api_version >= 1 ? State::authenticate : State::raw_tokens;
  return o;
}

SaslServerAuthenticator::Outcome SaslServerAuthenticator::handle_authenticate(proto::ByteView frame) {
  auto peek = proto::peek_header(frame);
  if (!peek) return fail("invalid request during SASL authentication");
  if (peek->api_key != proto::SaslAuthenticateApi::key) {
    // Kafka answers the unexpected request with its error response
    // (ILLEGAL_SASL_STATE) where it can build one; the connection closes
    // either way, and that is what a client acts on.
    const ApiRoute* route = find_route(peek->api_key);
    return fail(std::string("unexpected Kafka request of type ") + (route ? route->name : std::to_string(peek->api_key)) +
                " during SASL authentication");
  }
  if (peek->api_version < proto::SaslAuthenticateApi::min_version ||
      peek->api_version > proto::SaslAuthenticateApi::max_version)
    return fail("unsupported SaslAuthenticate version " + std::to_string(peek->api_version));
  proto::Reader r(frame);
  proto::RequestHeader header;
  header.decode(r, proto::request_header_version(proto::SaslAuthenticateApi::is_flexible(peek->api_version)));
  proto::SaslAuthenticateRequest request;
  request.decode(r, header.api_version);
  if (!r.ok()) return fail("malformed SaslAuthenticate request");

  proto::SaslAuthenticateResponse response;
  auto refuse = [&](std::string message) {
    response.error_code = proto::code(proto::ErrorCode::sasl_authentication_failed);
    response.error_message = message;
    return fail(message, encode_response<proto::SaslAuthenticateApi>(header, response));
  };
  if (!server_)
    return refuse("SASL mechanism '" + mechanism_ + "' requested by client is not supported for re-authentication of mechanism '" +
                  previous_->mechanism + "'");
  auto step = server_->evaluate_response(request.auth_bytes);
  if (step.error) {
    std::string message = *step.error;
    // Kafka's generic message names the phase it failed in.
    if (reauthenticating() && message == security::sasl::generic_authentication_failure(server_->mechanism()))
      message = "Authentication failed during re-authentication due to invalid credentials with SASL mechanism " +
                mechanism_;
    auto o = refuse(message);
    if (!step.reason.empty()) o.failure = step.reason;
    return o;
  }
  response.auth_bytes = std::move(step.challenge);
  if (step.complete) {
    int64_t lifetime = 0;
    if (auto why = complete(lifetime)) return refuse(*why);
    response.session_lifetime_ms = lifetime;
  }
  Outcome o;
  o.response = encode_response<proto::SaslAuthenticateApi>(header, response);
  return o;
}

SaslServerAuthenticator::Outcome SaslServerAuthenticator::handle_raw_token(proto::ByteView frame) {
  // SaslHandshake v0: no Kafka framing around the tokens, and no way to say
  // why it failed: the connection just closes.
  if (!server_) return fail("SASL mechanism changed during re-authentication");
  auto step = server_->evaluate_response(frame);
  if (step.error) return fail(step.reason.empty() ? *step.error : step.reason);
  if (step.complete) {
    int64_t lifetime = 0;
    if (auto why = complete(lifetime)) return fail(*why);
  }
  Outcome o;
  o.response = std::move(step.challenge);
  return o;
}

std::optional<std::string> SaslServerAuthenticator::complete(int64_t& session_lifetime_ms) {
  security::KafkaPrincipal principal{"User", server_->authorization_id()};
  if (previous_ && previous_->principal != principal)
    return "Cannot change principals during re-authentication from " + previous_->principal.type + "." +
           previous_->principal.name + ": " + principal.type + "." + principal.name;
  principal_ = std::move(principal);
  // Kafka's ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs: the
  // smaller of connections.max.reauth.ms and the credential's remaining
  // life; no expiry when neither is set.
  const auto it = config_.max_reauth_ms.find(mechanism_);
  const int64_t max_reauth = it == config_.max_reauth_ms.end() ? 0 : it->second;
  const auto credential_expiry = server_->credential_expiration_ms();
  session_lifetime_ms = 0;
  session_expiry_.reset();
  if (credential_expiry || max_reauth > 0) {
    if (!credential_expiry)
      session_lifetime_ms = max_reauth;
    else if (max_reauth <= 0)
      session_lifetime_ms = std::max<int64_t>(0, *credential_expiry - runnel::Clock::system().wall_ms());
    else
      session_lifetime_ms = std::max<int64_t>(0, std::min(*credential_expiry - runnel::Clock::system().wall_ms(), max_reauth));
    session_expiry_ = Clock::now() + std::chrono::milliseconds(session_lifetime_ms);
  }
  previous_.reset();
  state_ = State::complete;
  return std::nullopt;
}

bool SaslServerAuthenticator::maybe_begin_reauthentication(Clock::time_point now) {
  if (state_ != State::complete || !session_expiry_) return false;
  if (last_reauthentication_start_ && now - *last_reauthentication_start_ < kMinReauthInterval) return false;
  last_reauthentication_start_ = now;
  previous_ = Previous{mechanism_, principal_};
  server_.reset();
  state_ = State::handshake;
  return true;
}

}  // namespace runnel::broker
