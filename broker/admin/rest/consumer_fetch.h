// One fetch round of a REST consumer instance: a consumer's Fetch (v12,
// sessionless, read_uncommitted as REST Proxy's consumer reads) for the
// partitions at their positions, through this broker's Fetch handler and,
// in a cluster, for partitions led elsewhere, at their leaders (the local
// handler answers those NOT_LEADER_OR_FOLLOWER after checking the
// client's READ; broker_calls.h). Records are decoded in offset order per
// partition, control batches skipped, and handed out below `max_bytes`
// of keys and values (REST Proxy's consumer.request.max.bytes measure);
// the positions move past what was handed out only.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <vector>

#include "broker/admin/rest/consumer_instance.h"

namespace runnel::broker::admin::rest {

struct FetchRound {
  std::vector<ConsumedRestRecord> records;
  std::set<TopicPartition> out_of_range;  // OFFSET_OUT_OF_RANGE: reset these
  std::optional<RestError> error;         // an error REST answers (not authorized, ...)
  bool full = false;                      // stopped at max_bytes: records were left
};

struct FetchLimits {
  std::chrono::milliseconds max_wait{0};
  // Keys and values handed out stay below this; the record that would
  // reach it stays for the next round, unless it is the first and
  // first_goes.
  int64_t max_bytes = 64 * 1024 * 1024;
  bool first_goes = true;
};

// Fetches once from `positions`, moving them past the records returned.
awaitable<FetchRound> fetch_round(Broker& broker, const RestClient& client,
                                  std::map<TopicPartition, int64_t>& positions, FetchLimits limits);

}  // namespace runnel::broker::admin::rest
