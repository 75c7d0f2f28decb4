// Kafka's DelayedProduce: an acks=all Produce answers once every partition
// it appended to has its high watermark past the appended records (the ISR
// has them), or at request.timeout (the request's TimeoutMs) with
// REQUEST_TIMED_OUT for the partitions still short. It waits in the
// produce purgatory on each partition's produce watch list, which the
// partition checks whenever its high watermark moves. On one broker the
// high watermark passes the records at the append, so the first check
// completes it.
#pragma once

#include <chrono>
#include <memory>
#include <span>

#include "broker/delayed_operations.h"
#include "replication/partition.h"

namespace runnel::replication {

using broker::awaitable;
namespace asio = broker::asio;

// One partition of a Produce: what to append and what came of it.
struct AppendEntry {
  // Null when the partition is not hosted here: `result` already carries
  // the error and nothing is appended.
  std::shared_ptr<Partition> partition;
  LeaderAppendRequest request;
  LeaderAppendResult result;
  bool acks_pending = false;  // appended, waiting for the high watermark
};

// Waits until no entry has acks pending or the timeout passes; entries
// still pending then fail with REQUEST_TIMED_OUT.
awaitable<void> wait_for_acks(broker::DelayedOperations& purgatory, std::span<AppendEntry> entries,
                              std::chrono::milliseconds timeout);

}  // namespace runnel::replication
