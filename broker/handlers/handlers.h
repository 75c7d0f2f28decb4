// Every API handler: takes the generated request, returns the generated
// response. One file per API in this folder, named by key (NN_name.cc).
#pragma once

#include "broker/request_context.h"
#include "protocol/messages/all_apis.h"

namespace runnel::broker {

namespace p = runnel::protocol;

awaitable<p::ApiVersionsResponse> handle_api_versions(RequestContext& ctx, p::ApiVersionsRequest& req);

}  // namespace runnel::broker
