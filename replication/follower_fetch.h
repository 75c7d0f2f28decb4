// What makes a Fetch a replica's (Kafka's FetchRequest.replicaId and
// replicaEpoch, KIP-903): the replica id in ReplicaId (v14 and older) or
// in the tagged ReplicaState (v15+), >= 0 for a broker. The Fetch handler
// asks here and, for a replica, reads each partition through
// Partition::fetch_records_for_follower (replication/delayed_fetch.h).
#pragma once

#include <optional>

#include "cluster/metadata_image.h"
#include "protocol/messages/01_fetch.h"
#include "replication/partition.h"

namespace runnel::replication {

// The fetching replica, or nullopt for a consumer (a negative replica id).
// `image` gives the broker epoch the metadata holds for it, when that
// broker is registered and not fenced (Kafka's getAliveBrokerEpoch).
std::optional<ReplicaFetch> replica_fetch_of(const protocol::FetchRequest& request, int16_t version,
                                             const cluster::MetadataImage& image);

// Kafka's FetchRequest.optionalEpoch for LastFetchedEpoch: sent from v12
// on; a negative epoch is none.
std::optional<LeaderEpoch> last_fetched_epoch_of(int32_t last_fetched_epoch, int16_t version);

}  // namespace runnel::replication
