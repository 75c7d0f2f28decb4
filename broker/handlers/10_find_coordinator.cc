// FindCoordinator (key 10): which broker coordinates a group (key type 0)
// or a transactional id (1). With one broker the answer is this node, for
// the listener the request arrived on. v0-3 carry one key; v4+ a batch of
// keys, each with its own error. Runnel has no transaction coordinator yet,
// so transactional ids get TRANSACTIONAL_ID_AUTHORIZATION_FAILED, Kafka's
// answer for an id the client may not use: clients fail at once, where
// COORDINATOR_NOT_AVAILABLE is retried for ever (franz-go). InitProducerId
// and Produce answer transactional ids the same way. Share groups (2) are
// refused.
#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/handlers/handlers.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

namespace {

using p::ErrorCode;

struct Answer {
  ErrorCode error = ErrorCode::none;
  std::optional<std::string> message;
};

Answer find(Broker& b, int8_t key_type) {
  if (key_type == 0) {
    // Like Kafka, the offsets topic is created when a group first needs it.
    if (auto ec = b.groups().ensure_offsets_topic())
      return {ErrorCode::coordinator_not_available, "The coordinator is not available."};
    return {};
  }
  if (key_type == 1) return {ErrorCode::transactional_id_authorization_failed, "Transactional Id authorization failed."};
  return {ErrorCode::invalid_request, "Unknown coordinator type: " + std::to_string(key_type)};
}

}  // namespace

template <>
awaitable<p::FindCoordinatorResponse> handle<p::FindCoordinatorApi>(RequestContext& ctx, p::FindCoordinatorRequest& req) {
  Broker& b = ctx.broker;
  const Listener& l = b.advertised_listener(ctx.listener_name);
  p::FindCoordinatorResponse resp;
  if (ctx.api_version() < 4) {
    Answer a = find(b, req.key_type);
    resp.error_code = p::code(a.error);
    resp.error_message = a.message;
    bool ok = a.error == ErrorCode::none;
    resp.node_id = ok ? b.node_id() : -1;
    resp.host = ok ? l.host : "";
    resp.port = ok ? l.port : -1;
    co_return resp;
  }
  for (const auto& key : req.coordinator_keys) {
    Answer a = find(b, req.key_type);
    auto& c = resp.coordinators.emplace_back();
    c.key = key;
    bool ok = a.error == ErrorCode::none;
    c.node_id = ok ? b.node_id() : -1;
    c.host = ok ? l.host : "";
    c.port = ok ? l.port : -1;
    c.error_code = p::code(a.error);
    c.error_message = a.message;
  }
  co_return resp;
}

}  // namespace runnel::broker
