// Every API the broker serves, one line each: generated type, handler, and
// the version range advertised when it differs from the codec's.
#include "broker/api_registry.h"

#include <algorithm>
#include <array>

#include "broker/api_route.h"
#include "broker/handlers/handlers.h"

namespace runnel::broker {

namespace {

using namespace runnel::protocol;

const auto kRoutes = std::to_array<ApiRoute>({
    route<ProduceApi, handle_produce>(0, 12),  // v13 needs topic ids in produce: not yet
    route<FetchApi, handle_fetch>(),
    route<ListOffsetsApi, handle_list_offsets>(),
    route<MetadataApi, handle_metadata>(),
    route<ApiVersionsApi, handle_api_versions>(),
    route<CreateTopicsApi, handle_create_topics>(),
    route<DeleteTopicsApi, handle_delete_topics>(),
    route<InitProducerIdApi, handle_init_producer_id>(),
});

}  // namespace

std::span<const ApiRoute> api_routes() { return kRoutes; }

const ApiRoute* find_route(int16_t api_key) {
  for (const auto& r : kRoutes)
    if (r.key == api_key) return &r;
  return nullptr;
}

}  // namespace runnel::broker
