// Kafka's DelayedFetch and the waiting half of ReplicaManager.fetchMessages:
// read every partition of a Fetch (Partition::read); answer at once when
// MinBytes are there, when a partition has an error (unknown, fenced epoch,
// out of range, storage) or when MaxWaitMs is 0; otherwise wait in the fetch
// purgatory, watching each partition, until an append or a deletion makes
// one of those true or the wait runs out. A waiting fetch is on its
// partitions' watch lists only while it waits: an idle long poll leaves
// nothing behind.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>

#include "broker/delayed_operations.h"
#include "protocol/messages/01_fetch.h"
#include "replication/partition.h"

namespace runnel::replication {

using broker::awaitable;
namespace asio = broker::asio;

// One partition of a Fetch request and where its answer goes.
struct FetchPartition {
  // Null when the partition is not hosted here: `out` already carries the
  // error and the partition is never read.
  std::shared_ptr<Partition> partition;
  protocol::FetchResponse::FetchableTopicResponse::PartitionData* out = nullptr;
  Offset fetch_offset{0};
  int32_t max_bytes = 0;                            // PartitionMaxBytes
  std::optional<LeaderEpoch> current_leader_epoch;  // nullopt: the client does not say
  std::optional<LeaderEpoch> last_fetched_epoch;    // a replica's LastFetchedEpoch (v12+), if it sent one
  Offset log_start_offset = kUnknownOffset;         // a replica's LogStartOffset (v5+), if it sent one
};

struct FetchParams {
  int32_t min_bytes = 1;
  // The response's record bytes: min(MaxBytes, fetch.max.bytes); the first
  // partition with data returns at least one whole batch anyway (KIP-74).
  int64_t max_bytes = 0;
  std::chrono::milliseconds max_wait{0};
  FetchIsolation isolation = FetchIsolation::high_watermark;
  // Set for a replica's fetch (ReplicaId >= 0): each partition is read by
  // Partition::fetch_records_for_follower, to the log end offset.
  std::optional<ReplicaFetch> replica;
};

// What one read of every partition found.
struct FetchRead {
  int64_t bytes = 0;   // record bytes in the response
  bool error = false;  // some partition answers with an error code, or a diverging epoch
};

// Reads each partition into its response slot (Kafka's readFromLog). A
// replica's fetch updates its fetch state only with `update_fetch_state`
// (the first read; not the purgatory's re-reads, as in Kafka).
FetchRead read_partitions(std::span<FetchPartition> partitions, const FetchParams& params, bool update_fetch_state);

// Reads, and waits in `purgatory` if the answer may improve by waiting.
// The response slots hold the final answer when it returns. `after_read`
// runs once the first read has updated a replica's fetch state and before
// any wait: where Kafka's Partition.updateFollowerFetchState expands the
// ISR, so a follower that has caught up joins it then, not one long poll
// (replica.fetch.wait.max.ms) later.
awaitable<void> fetch_messages(broker::DelayedOperations& purgatory, std::span<FetchPartition> partitions,
                               FetchParams params, std::function<void()> after_read = {});

}  // namespace runnel::replication
