// Reads records of one topic's assigned partitions from their leaders, as
// the Java consumer's Fetcher does: one Fetch per leader per round (no
// fetch session), records handed over in offset order per partition,
// control batches skipped and, under read_committed, aborted transactions'
// batches dropped using the response's aborted-transaction list.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "cli/cluster.h"
#include "cli/record_format.h"
#include "protocol/messages/01_fetch.h"

namespace runnel::cli {

struct FetchOptions {
  int8_t isolation_level = 0;  // 0 read_uncommitted, 1 read_committed
  int32_t max_wait_ms = 500;
  int32_t min_bytes = 1;
  int32_t max_bytes = 52428800;
  int32_t partition_max_bytes = 1048576;
  // Where to go on OFFSET_OUT_OF_RANGE: kEarliestTimestamp or kLatestTimestamp.
  int64_t reset_to = -2;
};

class Fetcher {
 public:
  Fetcher(Cluster& cluster, std::string topic, FetchOptions options);

  // partition -> the next offset to read.
  void assign(std::map<int32_t, int64_t> positions);
  const std::map<int32_t, int64_t>& positions() const { return positions_; }

  // One round. `on_record` returns false to stop at once (the position then
  // points just past that record). Returns false if stopped so.
  bool poll(const std::function<bool(const ConsumedRecord&)>& on_record);

  // Every assigned partition's position has reached its end (high
  // watermark, or last stable offset under read_committed) as last fetched.
  bool at_end() const;
  // Record bytes received (batches as fetched).
  uint64_t bytes_fetched() const { return bytes_fetched_; }

 private:
  // Reads one partition's records; false if on_record stopped it.
  bool deliver(int32_t partition, const protocol::FetchResponse::FetchableTopicResponse::PartitionData& data,
               const std::function<bool(const ConsumedRecord&)>& on_record);

  Cluster& cluster_;
  std::string topic_;
  FetchOptions options_;
  std::map<int32_t, int64_t> positions_;
  std::map<int32_t, int64_t> end_;
  uint64_t bytes_fetched_ = 0;
};

}  // namespace runnel::cli
