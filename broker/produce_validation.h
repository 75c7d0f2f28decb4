// What Produce checks in a partition's records before appending them
// (Kafka's ProduceRequest.validateRecords and LogValidator), and the topic's
// compression.type applied: a batch in another codec is recompressed.
#pragma once

#include <optional>
#include <span>

#include "broker/config.h"
#include "broker/topic_table.h"
#include "protocol/codec/types.h"
#include "protocol/records/batch_format.h"
#include "protocol/records/batch_status.h"
#include "replication/append.h"

namespace runnel::broker {

using replication::PreparedBatch;

// The topic's limits come from its typed config (topic.config), built
// before the request; the broker config is not read per batch.
// `records` is one partition's records field of a Produce request (v3+),
// `header` its batch header as the handler read it once (nullopt when the
// bytes are too short for one); the checks and the record reader use it
// rather than reading it again. The bytes may be rewritten in place by the
// append, so they must belong to the request frame.
PreparedBatch prepare_batch(const BrokerConfig& config, const Topic& topic, int32_t partition,
                            const protocol::Records& records,
                            const std::optional<protocol::records::BatchHeader>& header, int64_t now_ms);

}  // namespace runnel::broker
