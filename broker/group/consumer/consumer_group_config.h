// The broker configs of KIP-848 consumer groups (Kafka's
// GroupCoordinatorConfig, group.consumer.*), with Kafka's defaults.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace runnel::broker::group::consumer {

struct ConsumerGroupConfig {
  int32_t session_timeout_ms = 45000;     // group.consumer.session.timeout.ms
  int32_t heartbeat_interval_ms = 5000;   // group.consumer.heartbeat.interval.ms
  int32_t max_size = INT32_MAX;           // group.consumer.max.size
  std::vector<std::string> assignors{"uniform", "range"};  // group.consumer.assignors; the first is the default
};

}  // namespace runnel::broker::group::consumer
