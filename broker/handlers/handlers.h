// Every API handler: takes the generated request, returns the generated
// response. One file per API in this folder, named by key (NN_name.cc).
#pragma once

#include "broker/request_context.h"
#include "protocol/messages/all_apis.h"

namespace runnel::broker {

namespace p = runnel::protocol;

awaitable<p::ProduceResponse> handle_produce(RequestContext& ctx, p::ProduceRequest& req);
awaitable<p::FetchResponse> handle_fetch(RequestContext& ctx, p::FetchRequest& req);
awaitable<p::ListOffsetsResponse> handle_list_offsets(RequestContext& ctx, p::ListOffsetsRequest& req);
awaitable<p::MetadataResponse> handle_metadata(RequestContext& ctx, p::MetadataRequest& req);
awaitable<p::ApiVersionsResponse> handle_api_versions(RequestContext& ctx, p::ApiVersionsRequest& req);
awaitable<p::CreateTopicsResponse> handle_create_topics(RequestContext& ctx, p::CreateTopicsRequest& req);
awaitable<p::DeleteTopicsResponse> handle_delete_topics(RequestContext& ctx, p::DeleteTopicsRequest& req);
awaitable<p::InitProducerIdResponse> handle_init_producer_id(RequestContext& ctx, p::InitProducerIdRequest& req);

}  // namespace runnel::broker
