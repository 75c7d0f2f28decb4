// Every API the broker serves, one line each: the generated type (its
// handler is handle<Api>, in handlers/NN_name.cc) and the version range
// advertised when it differs from the codec's.
#include "broker/api_registry.h"

#include <algorithm>
#include <array>

#include "broker/api_route.h"
#include "broker/handlers/handlers.h"

namespace runnel::broker {

namespace {

using namespace runnel::protocol;

const auto kRoutes = std::to_array<ApiRoute>({
    route<ProduceApi>(0, 12),  // v13 needs topic ids in produce: not yet
    route<FetchApi>(),
    route<ListOffsetsApi>(),
    route<MetadataApi>(),
    route<OffsetCommitApi>(),
    route<OffsetFetchApi>(),
    route<FindCoordinatorApi>(),
    route<JoinGroupApi>(),
    route<HeartbeatApi>(),
    route<LeaveGroupApi>(),
    route<SyncGroupApi>(),
    route<DescribeGroupsApi>(),
    route<ListGroupsApi>(),
    route<SaslHandshakeApi>(),
    route<ApiVersionsApi>(),
    route<CreateTopicsApi>(),
    route<DeleteTopicsApi>(),
    route<DeleteRecordsApi>(),
    route<InitProducerIdApi>(),
    route<OffsetForLeaderEpochApi>(),
    route<AddPartitionsToTxnApi>(),
    route<AddOffsetsToTxnApi>(),
    route<EndTxnApi>(),
    route<WriteTxnMarkersApi>(),
    route<TxnOffsetCommitApi>(),
    route<DescribeAclsApi>(),
    route<CreateAclsApi>(),
    route<DeleteAclsApi>(),
    route<DescribeConfigsApi>(),
    route<AlterConfigsApi>(),
    route<DescribeLogDirsApi>(),
    route<SaslAuthenticateApi>(),
    route<CreatePartitionsApi>(),
    route<DeleteGroupsApi>(),
    route<ElectLeadersApi>(),
    route<IncrementalAlterConfigsApi>(),
    route<AlterPartitionReassignmentsApi>(),
    route<ListPartitionReassignmentsApi>(),
    route<OffsetDeleteApi>(),
    route<DescribeClientQuotasApi>(),
    route<AlterClientQuotasApi>(),
    route<DescribeUserScramCredentialsApi>(),
    route<AlterUserScramCredentialsApi>(),
    route<DescribeClusterApi>(),
    route<DescribeProducersApi>(),
    route<DescribeTransactionsApi>(),
    route<ListTransactionsApi>(),
    route<ConsumerGroupHeartbeatApi>(),
    route<ConsumerGroupDescribeApi>(),
    route<DescribeTopicPartitionsApi>(),
});

}  // namespace

std::span<const ApiRoute> api_routes() { return kRoutes; }

const ApiRoute* find_route(int16_t api_key) {
  for (const auto& r : kRoutes)
    if (r.key == api_key) return &r;
  return nullptr;
}

}  // namespace runnel::broker
