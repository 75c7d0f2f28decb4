// Producer ids for InitProducerId, unique across restarts and, over etcd,
// across brokers.
//
// As Kafka's controller (ProducerIdControlManager) and Redpanda's
// id_allocator: ids are handed out in blocks of 1000, and a block is
// claimed by compare-and-swap of the producer_ids key (the end of the last
// block claimed) before any id from it is used, so a restart continues
// after the block and two brokers never claim the same one. A lost race
// re-reads the key and claims the next block.
#pragma once

#include <cstdint>

#include "cluster/metadata_store.h"

namespace runnel::cluster {

class ProducerIdAllocator {
 public:
  static constexpr int64_t kBlockSize = 1000;

  explicit ProducerIdAllocator(MetadataStore& store) : store_(store) {}
  // Reads the end of the last block claimed; an error when the key holds
  // something else than a non-negative number.
  awaitable<std::error_code> load();
  // The next unused id; an error when no block could be claimed.
  awaitable<Result<int64_t>> next();

 private:
  std::error_code adopt(const KeyValue& kv);

  MetadataStore& store_;
  int64_t next_ = 0;
  int64_t block_end_ = 0;      // exclusive
  int64_t claimed_end_ = 0;    // the key's value as last seen
  Revision revision_ = kAbsent;  // the key's mod_revision as last seen
};

}  // namespace runnel::cluster
