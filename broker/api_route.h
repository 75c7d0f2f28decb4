// Builds an ApiRoute from a generated Api type; its handler is handle<Api>.
#pragma once

#include "broker/api_registry.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/quota_managers.h"
#include "protocol/header.h"

namespace runnel::broker {

template <typename Api>
awaitable<bool> serve_api(RequestContext& ctx, protocol::Reader& body, protocol::Writer& out) {
  const int16_t v = ctx.api_version();
  typename Api::Request request;
  request.decode(body, v);
  // Bytes after the last field are ignored, as Kafka does: librdkafka 2.x
  // leaves 3 bytes of its array-count placeholder in an all-topics Metadata
  // v9+ request, and Kafka answers it.
  if (!body.ok()) co_return false;
  typename Api::Response response = co_await handle<Api>(ctx, request);
  ctx.broker.error_counters().count_response(Api::key, response);
  // The request quota, for every request a handler did not measure itself;
  // WriteTxnMarkers is a broker's, exempt as Kafka's cluster actions are.
  QuotaManagers& quotas = ctx.broker.quotas();
  if (!ctx.quotas_recorded && Api::key != protocol::WriteTxnMarkersApi::key && quotas.measure_request_time())
    quotas.throttle(quotas.request(), ctx, quotas.record_request_time(ctx));
  if constexpr (requires { response.throttle_time_ms; })
    if (ctx.throttle_time_ms > 0) response.throttle_time_ms = ctx.throttle_time_ms;
  if (!ctx.send_response) co_return true;
  protocol::ResponseHeader header{ctx.header.correlation_id, {}};
  header.encode(out, protocol::response_header_version(Api::key, Api::is_flexible(v)));
  response.encode(out, v);
  co_return true;
}

template <typename Api>
constexpr ApiRoute route(int16_t min_version = Api::min_version, int16_t max_version = Api::max_version) {
  static_assert(Api::min_version >= 0);
  return ApiRoute{Api::key, Api::name, min_version, max_version, Api::flexible_from, &serve_api<Api>};
}

}  // namespace runnel::broker
