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
    route<OffsetCommitApi, handle_offset_commit>(),
    route<OffsetFetchApi, handle_offset_fetch>(),
    route<FindCoordinatorApi, handle_find_coordinator>(),
    route<JoinGroupApi, handle_join_group>(),
    route<HeartbeatApi, handle_heartbeat>(),
    route<LeaveGroupApi, handle_leave_group>(),
    route<SyncGroupApi, handle_sync_group>(),
    route<DescribeGroupsApi, handle_describe_groups>(),
    route<ListGroupsApi, handle_list_groups>(),
    route<ApiVersionsApi, handle_api_versions>(),
    route<CreateTopicsApi, handle_create_topics>(),
    route<DeleteTopicsApi, handle_delete_topics>(),
    route<DeleteRecordsApi, handle_delete_records>(),
    route<InitProducerIdApi, handle_init_producer_id>(),
    route<OffsetForLeaderEpochApi, handle_offset_for_leader_epoch>(),
    route<DescribeConfigsApi, handle_describe_configs>(),
    route<AlterConfigsApi, handle_alter_configs>(),
    route<DescribeLogDirsApi, handle_describe_log_dirs>(),
    route<CreatePartitionsApi, handle_create_partitions>(),
    route<DeleteGroupsApi, handle_delete_groups>(),
    route<IncrementalAlterConfigsApi, handle_incremental_alter_configs>(),
    route<OffsetDeleteApi, handle_offset_delete>(),
    route<DescribeClusterApi, handle_describe_cluster>(),
});

}  // namespace

std::span<const ApiRoute> api_routes() { return kRoutes; }

const ApiRoute* find_route(int16_t api_key) {
  for (const auto& r : kRoutes)
    if (r.key == api_key) return &r;
  return nullptr;
}

}  // namespace runnel::broker
