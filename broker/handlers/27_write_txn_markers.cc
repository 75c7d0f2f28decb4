// WriteTxnMarkers (key 27): a transaction coordinator has the leader of
// each partition a transaction wrote to append the COMMIT or ABORT marker
// that ends it (a control batch, protocol/records/control_record.h). As
// Kafka's handleWriteTxnMarkersRequest: CLUSTER_ACTION on the cluster, else
// CLUSTER_AUTHORIZATION_FAILED everywhere; the append itself, its epoch
// checks and its fsync are transaction/marker_writer.h's.
#include <deque>

#include "broker/authorization.h"
#include "broker/broker.h"
#include "broker/handlers/handlers.h"
#include "broker/transaction/marker_writer.h"
#include "protocol/error_codes.h"

namespace runnel::broker {

template <>
awaitable<p::WriteTxnMarkersResponse> handle<p::WriteTxnMarkersApi>(RequestContext& ctx,
                                                                     p::WriteTxnMarkersRequest& req) {
  p::WriteTxnMarkersResponse resp;
  const bool allowed = authorized_on_cluster(ctx, AclOperation::cluster_action);
  std::deque<transaction::TxnMarker> markers;
  std::vector<transaction::MarkerTarget> targets;
  for (const auto& marker : req.markers) {
    const auto* m = &markers.emplace_back(transaction::TxnMarker{marker.producer_id, marker.producer_epoch,
                                                                 marker.transaction_result,
                                                                 marker.coordinator_epoch, marker.transaction_version});
    for (const auto& topic : marker.topics)
      for (int32_t index : topic.partition_indexes)
        targets.push_back({m, topic.name, index, allowed ? p::ErrorCode::none : p::ErrorCode::cluster_authorization_failed});
  }
  co_await transaction::write_markers(ctx.broker, targets);

  auto target = targets.begin();
  for (const auto& marker : req.markers) {
    auto& mr = resp.markers.emplace_back();
    mr.producer_id = marker.producer_id;
    for (const auto& topic : marker.topics) {
      auto& tr = mr.topics.emplace_back();
      tr.name = topic.name;
      for (int32_t index : topic.partition_indexes) tr.partitions.push_back({index, p::code((target++)->error), {}});
    }
  }
  co_return resp;
}

}  // namespace runnel::broker
