// The group coordinator's broker configs (Kafka's GroupCoordinatorConfig
// and OffsetConfig), shared by the group managers and the offset manager.
#pragma once

#include <climits>
#include <cstdint>

#include "broker/group/consumer/consumer_group_config.h"

namespace runnel::broker::group {

struct CoordinatorConfig {
  int32_t offsets_partitions = 50;             // offsets.topic.num.partitions
  int32_t initial_rebalance_delay_ms = 3000;   // group.initial.rebalance.delay.ms
  int32_t min_session_timeout_ms = 6000;       // group.min.session.timeout.ms
  int32_t max_session_timeout_ms = 1800000;    // group.max.session.timeout.ms
  int32_t max_size = INT32_MAX;                // group.max.size
  int32_t offset_metadata_max_bytes = 4096;    // offset.metadata.max.bytes
  int64_t offsets_retention_ms = 10080LL * 60 * 1000;  // offsets.retention.minutes
  consumer::ConsumerGroupConfig consumer;              // group.consumer.*
};

}  // namespace runnel::broker::group
