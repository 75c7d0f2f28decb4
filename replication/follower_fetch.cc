#include "replication/follower_fetch.h"

namespace runnel::replication {

std::optional<ReplicaFetch> replica_fetch_of(const protocol::FetchRequest& request, int16_t version,
                                             const cluster::MetadataImage& image) {
  const int32_t id = version >= 15 ? request.replica_state.replica_id : request.replica_id;
  if (id < 0) return std::nullopt;
  ReplicaFetch out;
  out.replica = NodeId(id);
  out.broker_epoch = version >= 15 ? request.replica_state.replica_epoch : -1;
  if (const auto* broker = image.broker(out.replica); broker && !broker->fenced) out.known_broker_epoch = broker->epoch;
  return out;
}

std::optional<LeaderEpoch> last_fetched_epoch_of(int32_t last_fetched_epoch, int16_t version) {
  if (version < 12 || last_fetched_epoch < 0) return std::nullopt;
  return LeaderEpoch(last_fetched_epoch);
}

}  // namespace runnel::replication
