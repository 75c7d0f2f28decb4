// Every API handler: takes the generated request, returns the generated
// response. One file per API in this folder, named by key (NN_name.cc),
// defines handle<Api> for its API; api_registry.cc names the API once.
// Adding an API: its schema file, its handler file, its registry line.
#pragma once

#include "broker/request_context.h"
#include "protocol/messages/all_apis.h"

namespace runnel::broker {

namespace p = runnel::protocol;

template <typename Api>
awaitable<typename Api::Response> handle(RequestContext& ctx, typename Api::Request& req);

// Declared for every API the codec knows; only the served ones are defined.
#define RUNNEL_DECLARE_HANDLER(Api) \
  template <>                       \
  awaitable<p::Api::Response> handle<p::Api>(RequestContext & ctx, p::Api::Request & req);
RUNNEL_FOR_EACH_API(RUNNEL_DECLARE_HANDLER)
#undef RUNNEL_DECLARE_HANDLER

}  // namespace runnel::broker
