// Kafka's SaslServerAuthenticator: the SASL exchange on one connection of a
// SASL_PLAINTEXT or SASL_SSL listener, before any other request is served
// and again when the client re-authenticates (KIP-368).
//
// The connection hands it every frame while authentication is in progress.
// Before a mechanism is chosen only ApiVersions (once, first, after any
// retries at a version it does not know) and SaslHandshake are allowed;
// after SaslHandshake v1 the tokens come in SaslAuthenticate requests,
// after v0 as raw size-prefixed frames (clients before KIP-152). Anything else, a failed exchange, or an unknown mechanism
// is answered as Kafka answers it and then the connection is closed.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "protocol/codec/types.h"
#include "security/channel_builder.h"
#include "security/principal.h"
#include "security/sasl/sasl_server.h"

namespace runnel::broker {

class SaslServerAuthenticator {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SaslServerAuthenticator(const security::SaslServerConfig& config);

  struct Outcome {
    // This frame is an ApiVersions request for the connection to serve as
    // usual (the exchange allows it once, before SaslHandshake).
    bool serve_api_versions = false;
    // Bytes to send, without the 4-byte size prefix; nullopt: none. A raw
    // (v0) token may be empty and is still sent, as Kafka does.
    std::optional<protocol::Bytes> response;
    bool close = false;  // after `response` is sent
    // Why it failed, for the broker's log; empty when it did not.
    std::string failure;
  };
  Outcome on_frame(protocol::ByteView frame);

  // An exchange is under way: the connection's next frame goes to on_frame.
  bool in_progress() const { return state_ != State::complete; }
  // Kafka's KafkaChannel.maybeBeginServerReauthentication, for a
  // SaslHandshake frame on an authenticated connection: starts
  // re-authentication (true; then on_frame takes this frame) when the
  // session has an expiry and the last re-authentication began at least
  // a second ago; else the request is served as any other (an
  // ILLEGAL_SASL_STATE answer).
  bool maybe_begin_reauthentication(Clock::time_point now);
  // KIP-368: the session outlived its lifetime; Kafka closes the connection
  // on the next request that is not a re-authentication.
  bool session_expired(Clock::time_point now) const {
    return session_expiry_ && now > *session_expiry_;
  }

  // After the exchange: who the client is, and with which mechanism.
  const security::KafkaPrincipal& principal() const { return principal_; }
  const std::string& mechanism() const { return mechanism_; }
  bool reauthenticating() const { return previous_.has_value(); }

 private:
  enum class State { initial, handshake, authenticate, raw_tokens, complete };

  Outcome handle_kafka_request(protocol::ByteView frame);
  Outcome handle_authenticate(protocol::ByteView frame);
  Outcome handle_raw_token(protocol::ByteView frame);
  // The exchange finished (the server says complete): the principal, the
  // session lifetime; a message when re-authentication changed the principal.
  std::optional<std::string> complete(int64_t& session_lifetime_ms);
  Outcome fail(std::string why, std::optional<protocol::Bytes> response = std::nullopt);

  const security::SaslServerConfig& config_;
  State state_ = State::initial;
  std::string mechanism_;
  std::unique_ptr<security::sasl::SaslServer> server_;
  security::KafkaPrincipal principal_;
  // Re-authentication: the mechanism and principal being renewed.
  struct Previous {
    std::string mechanism;
    security::KafkaPrincipal principal;
  };
  std::optional<Previous> previous_;
  std::optional<Clock::time_point> session_expiry_;
  std::optional<Clock::time_point> last_reauthentication_start_;
};

}  // namespace runnel::broker
