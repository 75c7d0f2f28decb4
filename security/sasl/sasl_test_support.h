// What the SASL tests share: tokens as text, and a client driven against a
// server until one of them stops.
#pragma once

#include <string>
#include <string_view>

#include "security/sasl/sasl_client.h"
#include "security/sasl/sasl_server.h"
#include "security/sasl/sasl_text.h"

namespace runnel::security::sasl::testing {

inline std::span<const uint8_t> token(std::string_view s) { return as_bytes(s); }

inline std::string text(const Bytes& b) { return std::string(b.begin(), b.end()); }

// The server's final step of a full exchange (at most `max_rounds` tokens),
// and whether the client accepted the server's last challenge.
struct Exchange {
  SaslStep last;
  bool client_accepted = false;
};

inline Exchange run_exchange(SaslClient& client, SaslServer& server, int max_rounds = 4) {
  Exchange e;
  Bytes next = client.initial_response();
  for (int round = 0; round < max_rounds; ++round) {
    e.last = server.evaluate_response(next);
    if (e.last.error) return e;
    auto reply = client.evaluate_challenge(e.last.challenge);
    if (e.last.complete) {
      e.client_accepted = reply.has_value() && client.complete();
      return e;
    }
    if (!reply) return e;
    next = std::move(*reply);
  }
  return e;
}

}  // namespace runnel::security::sasl::testing
