// Test helpers for replication/: a partition over a fresh log, and the
// append request a client's Produce would make of a batch.
#pragma once

#include <memory>

#include "replication/partition.h"
#include "storage/test_util.h"

namespace runnel::replication::testing {

// `batch` must outlive the append: the partition appends it in place.
inline LeaderAppendRequest client_append(storage::testing::Bytes& batch, int16_t acks = -1, int32_t min_isr = 1) {
  LeaderAppendRequest r;
  r.required_acks = acks;
  r.min_insync_replicas = min_isr;
  r.validate = built_batch(batch);
  return r;
}

}  // namespace runnel::replication::testing
