#include "broker/sasl_server_authenticator.h"

#include <catch2/catch.hpp>

#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"
#include "protocol/error_codes.h"
#include "protocol/header.h"
#include "protocol/messages/03_metadata.h"
#include "protocol/messages/17_sasl_handshake.h"
#include "protocol/messages/18_api_versions.h"
#include "protocol/messages/36_sasl_authenticate.h"

using namespace runnel;
using broker::SaslServerAuthenticator;
namespace p = runnel::protocol;

namespace {

security::SaslServerConfig plain_config(int64_t max_reauth_ms = 0) {
  security::SaslServerConfig c;
  c.enabled_mechanisms = {"PLAIN"};
  security::sasl::SaslServerCallbacks callbacks;
  callbacks.plain_users = {{"user_alice", "alice-secret"}, {"user_bob", "bob-secret"}};
  callbacks.now_ms = [] { return int64_t{0}; };
  c.callbacks.emplace("PLAIN", callbacks);
  c.max_reauth_ms.emplace("PLAIN", max_reauth_ms);
  return c;
}

template <typename Api>
p::Bytes frame(const typename Api::Request& request, int16_t version, int32_t correlation_id = 7) {
  p::Bytes out;
  p::Writer w(out);
  p::RequestHeader header{Api::key, version, correlation_id, std::string("test"), {}};
  header.encode(w, p::request_header_version(Api::is_flexible(version)));
  request.encode(w, version);
  return out;
}

p::Bytes handshake(const std::string& mechanism, int16_t version = 1) {
  p::SaslHandshakeRequest r;
  r.mechanism = mechanism;
  return frame<p::SaslHandshakeApi>(r, version);
}

p::Bytes authenticate(const std::string& token, int16_t version = 1) {
  p::SaslAuthenticateRequest r;
  r.auth_bytes.assign(token.begin(), token.end());
  return frame<p::SaslAuthenticateApi>(r, version);
}

std::string plain(const std::string& user, const std::string& password) {
  return std::string(1, '\0') + user + std::string(1, '\0') + password;
}

template <typename Api>
typename Api::Response response(const SaslServerAuthenticator::Outcome& o, int16_t version) {
  REQUIRE(o.response);
  p::Reader r(p::ByteView(o.response->data(), o.response->size()));
  p::ResponseHeader h;
  h.decode(r, p::response_header_version(Api::key, Api::is_flexible(version)));
  typename Api::Response resp;
  resp.decode(r, version);
  REQUIRE(r.ok());
  REQUIRE(h.correlation_id == 7);
  return resp;
}

}  // namespace

TEST_CASE("SASL gating lets through ApiVersions once and the exchange only", "[sasl][authenticator]") {
  auto config = plain_config();
  SaslServerAuthenticator a(config);
  auto o = a.on_frame(frame<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 0));
  REQUIRE(o.serve_api_versions);
  REQUIRE_FALSE(o.close);
  // A second ApiVersions, or any other API, ends the connection.
  SaslServerAuthenticator b(config);
  REQUIRE(b.on_frame(frame<p::MetadataApi>(p::MetadataRequest{}, 1)).close);
  REQUIRE(a.on_frame(frame<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 0)).close);
  SaslServerAuthenticator c(config);
  const uint8_t junk[] = {1, 2};
  REQUIRE(c.on_frame(p::ByteView(junk, sizeof junk)).close);
}

TEST_CASE("SASL gating lets a client retry ApiVersions after a version it does not know", "[sasl][authenticator]") {
  // Kafka answers UNSUPPORTED_VERSION and stays in HANDSHAKE_OR_VERSIONS_REQUEST:
  // franz-go asks at v5, then again at the broker's highest.
  auto config = plain_config();
  SaslServerAuthenticator a(config);
  auto unknown = frame<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 3);
  const int16_t too_new = p::ApiVersionsApi::max_version + 1;
  unknown[2] = static_cast<uint8_t>(too_new >> 8);  // the header's api_version
  unknown[3] = static_cast<uint8_t>(too_new & 0xff);
  auto o = a.on_frame(unknown);
  REQUIRE(o.serve_api_versions);
  REQUIRE_FALSE(o.close);
  o = a.on_frame(frame<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 3));
  REQUIRE(o.serve_api_versions);
  REQUIRE_FALSE(o.close);
  REQUIRE(a.on_frame(frame<p::ApiVersionsApi>(p::ApiVersionsRequest{}, 3)).close);
}

TEST_CASE("SASL handshake refuses a mechanism that is not enabled", "[sasl][authenticator]") {
  auto config = plain_config();
  SaslServerAuthenticator a(config);
  auto o = a.on_frame(handshake("SCRAM-SHA-256"));
  REQUIRE(o.close);
  auto resp = response<p::SaslHandshakeApi>(o, 1);
  REQUIRE(resp.error_code == p::code(p::ErrorCode::unsupported_sasl_mechanism));
  REQUIRE(resp.mechanisms == std::vector<std::string>{"PLAIN"});
}

TEST_CASE("SASL PLAIN authenticates and a wrong password fails with Kafka's message", "[sasl][authenticator]") {
  auto config = plain_config();
  SaslServerAuthenticator a(config);
  REQUIRE(response<p::SaslHandshakeApi>(a.on_frame(handshake("PLAIN")), 1).error_code == 0);
  REQUIRE(a.in_progress());
  auto resp = response<p::SaslAuthenticateApi>(a.on_frame(authenticate(plain("alice", "alice-secret"))), 1);
  REQUIRE(resp.error_code == 0);
  REQUIRE(resp.session_lifetime_ms == 0);
  REQUIRE_FALSE(a.in_progress());
  REQUIRE(a.principal().to_string() == "User:alice");
  // No lifetime: no re-authentication, no expiry.
  REQUIRE_FALSE(a.maybe_begin_reauthentication(SaslServerAuthenticator::Clock::now()));
  REQUIRE_FALSE(a.session_expired(SaslServerAuthenticator::Clock::now() + std::chrono::hours(24)));

  SaslServerAuthenticator b(config);
  b.on_frame(handshake("PLAIN"));
  auto o = b.on_frame(authenticate(plain("alice", "wrong")));
  REQUIRE(o.close);
  auto failed = response<p::SaslAuthenticateApi>(o, 1);
  REQUIRE(failed.error_code == p::code(p::ErrorCode::sasl_authentication_failed));
  REQUIRE(failed.error_message == "Authentication failed: Invalid username or password");
  // Another API in place of SaslAuthenticate ends it too.
  SaslServerAuthenticator c(config);
  c.on_frame(handshake("PLAIN"));
  REQUIRE(c.on_frame(frame<p::MetadataApi>(p::MetadataRequest{}, 1)).close);
}

TEST_CASE("SASL handshake v0 takes raw tokens and answers with raw frames", "[sasl][authenticator]") {
  auto config = plain_config();
  SaslServerAuthenticator a(config);
  REQUIRE(response<p::SaslHandshakeApi>(a.on_frame(handshake("PLAIN", 0)), 0).error_code == 0);
  const std::string token = plain("bob", "bob-secret");
  auto o = a.on_frame(p::ByteView(reinterpret_cast<const uint8_t*>(token.data()), token.size()));
  REQUIRE_FALSE(o.close);
  REQUIRE(o.response);
  REQUIRE(o.response->empty());  // PLAIN's empty challenge, still sent
  REQUIRE(a.principal().to_string() == "User:bob");
}

TEST_CASE("SASL sessions expire after connections.max.reauth.ms and re-authenticate", "[sasl][authenticator]") {
  auto config = plain_config(60000);
  SaslServerAuthenticator a(config);
  a.on_frame(handshake("PLAIN"));
  auto resp = response<p::SaslAuthenticateApi>(a.on_frame(authenticate(plain("alice", "alice-secret"))), 1);
  REQUIRE(resp.session_lifetime_ms == 60000);
  const auto now = SaslServerAuthenticator::Clock::now();
  REQUIRE_FALSE(a.session_expired(now));
  REQUIRE(a.session_expired(now + std::chrono::seconds(61)));

  REQUIRE(a.maybe_begin_reauthentication(now));
  REQUIRE(a.in_progress());
  REQUIRE(a.reauthenticating());
  REQUIRE(response<p::SaslHandshakeApi>(a.on_frame(handshake("PLAIN")), 1).error_code == 0);
  resp = response<p::SaslAuthenticateApi>(a.on_frame(authenticate(plain("alice", "alice-secret"))), 1);
  REQUIRE(resp.error_code == 0);
  REQUIRE_FALSE(a.in_progress());
  // Kafka's one-second floor between re-authentications.
  REQUIRE_FALSE(a.maybe_begin_reauthentication(now + std::chrono::milliseconds(500)));
  REQUIRE(a.maybe_begin_reauthentication(now + std::chrono::seconds(2)));
  a.on_frame(handshake("PLAIN"));
  auto o = a.on_frame(authenticate(plain("bob", "bob-secret")));
  REQUIRE(o.close);
  REQUIRE(response<p::SaslAuthenticateApi>(o, 1).error_message ==
          "Cannot change principals during re-authentication from User.alice: User.bob");
}

TEST_CASE("SASL re-authentication must keep its mechanism", "[sasl][authenticator]") {
  auto config = plain_config(60000);
  config.enabled_mechanisms.push_back("OAUTHBEARER");
  config.callbacks.emplace("OAUTHBEARER", config.callbacks.at("PLAIN"));
  SaslServerAuthenticator a(config);
  a.on_frame(handshake("PLAIN"));
  a.on_frame(authenticate(plain("alice", "alice-secret")));
  REQUIRE(a.maybe_begin_reauthentication(SaslServerAuthenticator::Clock::now()));
  REQUIRE(response<p::SaslHandshakeApi>(a.on_frame(handshake("OAUTHBEARER")), 1).error_code == 0);
  auto o = a.on_frame(authenticate("n,,\x01"));
  REQUIRE(o.close);
  REQUIRE(response<p::SaslAuthenticateApi>(o, 1).error_message ==
          "SASL mechanism 'OAUTHBEARER' requested by client is not supported for re-authentication of mechanism "
          "'PLAIN'");
}
