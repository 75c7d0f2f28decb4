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
awaitable<p::OffsetCommitResponse> handle_offset_commit(RequestContext& ctx, p::OffsetCommitRequest& req);
awaitable<p::OffsetFetchResponse> handle_offset_fetch(RequestContext& ctx, p::OffsetFetchRequest& req);
awaitable<p::FindCoordinatorResponse> handle_find_coordinator(RequestContext& ctx, p::FindCoordinatorRequest& req);
awaitable<p::JoinGroupResponse> handle_join_group(RequestContext& ctx, p::JoinGroupRequest& req);
awaitable<p::HeartbeatResponse> handle_heartbeat(RequestContext& ctx, p::HeartbeatRequest& req);
awaitable<p::LeaveGroupResponse> handle_leave_group(RequestContext& ctx, p::LeaveGroupRequest& req);
awaitable<p::SyncGroupResponse> handle_sync_group(RequestContext& ctx, p::SyncGroupRequest& req);
awaitable<p::DescribeGroupsResponse> handle_describe_groups(RequestContext& ctx, p::DescribeGroupsRequest& req);
awaitable<p::ListGroupsResponse> handle_list_groups(RequestContext& ctx, p::ListGroupsRequest& req);
awaitable<p::ApiVersionsResponse> handle_api_versions(RequestContext& ctx, p::ApiVersionsRequest& req);
awaitable<p::CreateTopicsResponse> handle_create_topics(RequestContext& ctx, p::CreateTopicsRequest& req);
awaitable<p::DeleteTopicsResponse> handle_delete_topics(RequestContext& ctx, p::DeleteTopicsRequest& req);
awaitable<p::DeleteRecordsResponse> handle_delete_records(RequestContext& ctx, p::DeleteRecordsRequest& req);
awaitable<p::InitProducerIdResponse> handle_init_producer_id(RequestContext& ctx, p::InitProducerIdRequest& req);
awaitable<p::OffsetForLeaderEpochResponse> handle_offset_for_leader_epoch(RequestContext& ctx, p::OffsetForLeaderEpochRequest& req);
awaitable<p::DescribeConfigsResponse> handle_describe_configs(RequestContext& ctx, p::DescribeConfigsRequest& req);
awaitable<p::AlterConfigsResponse> handle_alter_configs(RequestContext& ctx, p::AlterConfigsRequest& req);
awaitable<p::DescribeLogDirsResponse> handle_describe_log_dirs(RequestContext& ctx, p::DescribeLogDirsRequest& req);
awaitable<p::CreatePartitionsResponse> handle_create_partitions(RequestContext& ctx, p::CreatePartitionsRequest& req);
awaitable<p::DeleteGroupsResponse> handle_delete_groups(RequestContext& ctx, p::DeleteGroupsRequest& req);
awaitable<p::IncrementalAlterConfigsResponse> handle_incremental_alter_configs(RequestContext& ctx, p::IncrementalAlterConfigsRequest& req);
awaitable<p::OffsetDeleteResponse> handle_offset_delete(RequestContext& ctx, p::OffsetDeleteRequest& req);
awaitable<p::DescribeClusterResponse> handle_describe_cluster(RequestContext& ctx, p::DescribeClusterRequest& req);

}  // namespace runnel::broker
