// The APIs the broker serves: one route per API key, with the version range
// it advertises in ApiVersions. The list itself is in api_registry.cc, one
// line per API.
#pragma once

#include <span>

#include "broker/request_context.h"
#include "protocol/codec/reader.h"
#include "protocol/codec/writer.h"

namespace runnel::broker {

struct ApiRoute {
  int16_t key;
  const char* name;
  int16_t min_version;  // advertised; may be narrower than the codec's range
  int16_t max_version;
  int16_t flexible_from;
  // Decodes the request body from `body`, runs the handler, and writes the
  // response header and body to `out` (unless the handler asked for no
  // response). Returns false when the body is malformed: the caller closes
  // the connection, as Kafka does.
  awaitable<bool> (*serve)(RequestContext& ctx, protocol::Reader& body, protocol::Writer& out);

  bool supports(int16_t version) const { return version >= min_version && version <= max_version; }
  bool is_flexible(int16_t version) const { return version >= flexible_from; }
};

std::span<const ApiRoute> api_routes();
const ApiRoute* find_route(int16_t api_key);

}  // namespace runnel::broker
