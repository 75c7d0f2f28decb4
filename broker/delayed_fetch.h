// Kafka's ReplicaManager.fetchMessages and DelayedFetch: read every
// partition of a Fetch; answer at once when MinBytes are there, when a
// partition has an error (unknown, fenced epoch, out of range, storage) or
// when MaxWaitMs is 0; otherwise wait in the fetch purgatory, watching each
// partition, until an append or a deletion makes one of those true or the
// wait runs out. A waiting fetch is on its partitions' watch lists only
// while it waits: an idle long poll leaves nothing behind.
#pragma once

#include <chrono>
#include <memory>
#include <span>

#include "broker/delayed_operations.h"
#include "broker/partition.h"
#include "protocol/messages/01_fetch.h"

namespace runnel::broker {

// One partition of a Fetch request and where its answer goes.
struct FetchPartition {
  // Null when the partition is not hosted here: `out` already carries the
  // error and the partition is never read.
  std::shared_ptr<Partition> partition;
  protocol::FetchResponse::FetchableTopicResponse::PartitionData* out = nullptr;
  int64_t fetch_offset = 0;
  int32_t max_bytes = 0;              // PartitionMaxBytes
  int32_t current_leader_epoch = -1;  // -1: the client does not say
};

struct FetchParams {
  int32_t min_bytes = 1;
  // The response's record bytes: min(MaxBytes, fetch.max.bytes); the first
  // partition with data returns at least one whole batch anyway (KIP-74).
  int64_t max_bytes = 0;
  std::chrono::milliseconds max_wait{0};
};

// What one read of every partition found.
struct FetchRead {
  int64_t bytes = 0;   // record bytes in the response
  bool error = false;  // some partition answers with an error code
};

// Reads each partition into its response slot (Kafka's readFromLog).
FetchRead read_partitions(std::span<FetchPartition> partitions, int64_t max_bytes);

// Reads, and waits in `purgatory` if the answer may improve by waiting.
// The response slots hold the final answer when it returns.
awaitable<void> fetch_messages(DelayedOperations& purgatory, std::span<FetchPartition> partitions,
                               FetchParams params);

}  // namespace runnel::broker
