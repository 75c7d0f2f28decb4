// Kafka's DelayedDeleteRecords: once the leader has moved its log start
// offset, a DeleteRecords answers when every partition's low watermark
// (Partition::low_watermark_if_leader: the smallest log start offset of
// the live replicas) has reached the requested offset, so the deleted
// records are gone from every replica that may still serve them, or at the
// request's TimeoutMs with REQUEST_TIMED_OUT and the low watermark of the
// deletion for those still short. It waits in the delete-records
// purgatory on each partition's delete_records_watchers, which a
// follower's fetch reporting a newer log start checks. A partition that
// stops leading meanwhile answers NOT_LEADER_OR_FOLLOWER, one no longer
// hosted UNKNOWN_TOPIC_OR_PARTITION, one on a failed log dir
// KAFKA_STORAGE_ERROR, each with low watermark -1. On one broker the low
// watermark is the leader's log start right after the deletion: it never
// waits, even with TimeoutMs 0 (with followers short, 0 times out at once,
// as Kafka's does).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>

#include "broker/delayed_operations.h"
#include "replication/partition.h"

namespace runnel::replication {

using broker::awaitable;

// One partition of a DeleteRecords, after the leader's deletion.
struct DeleteRecordsEntry {
  // Null when the partition failed before the deletion: `error` says why.
  std::shared_ptr<Partition> partition;
  // Kafka's requestedOffset: the request's offset, -1 made the high
  // watermark at the deletion.
  Offset required_offset = kUnknownOffset;
  Offset low_watermark = kUnknownOffset;
  ErrorCode error = ErrorCode::none;
  bool acks_pending = false;  // deleted on the leader, waiting for the replicas
};

// Whether a broker is registered and unfenced now (the metadata's view).
using IsLiveBroker = std::function<bool(NodeId)>;
// Whether the partition is still the one hosted under its name here.
using IsHosted = std::function<bool(const Partition&)>;

// Sets each deleted entry's low watermark, then waits while one is short
// of its required offset (Kafka's delayedDeleteRecordsRequired). The
// entries hold the final answer when it returns.
awaitable<void> wait_for_low_watermark(broker::DelayedOperations& purgatory, std::span<DeleteRecordsEntry> entries,
                                       std::chrono::milliseconds timeout, IsLiveBroker is_live, IsHosted is_hosted);

}  // namespace runnel::replication
