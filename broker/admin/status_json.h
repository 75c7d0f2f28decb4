// The admin listener's JSON documents for scripts, from the broker's
// metadata image and its own replicas:
//
//   GET /v1/brokers            [{"node_id", "rack", "fenced", "alive",
//                                "is_controller", "endpoints": [{"listener",
//                                "security_protocol", "host", "port"}]}]
//   GET /v1/topics             [{"name", "topic_id", "internal",
//                                "partitions", "replication_factor",
//                                "configs": {overrides}}]
//   GET /v1/partitions/<topic> [{"partition", "leader", "leader_epoch",
//                                "replicas", "isr", and where this broker
//                                has a replica "log_start_offset",
//                                "high_watermark", "last_stable_offset",
//                                "log_end_offset", "size"}]
//
// "is_controller" is the controller clients are told of (DescribeCluster's).
// Runs on the broker's event loop.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::admin {

struct JsonAnswer {
  int status = 200;  // 404 for a topic that does not exist
  std::string body;
};

// The document at `path`; nullopt when `path` names none of them.
std::optional<JsonAnswer> status_json(Broker& broker, std::string_view path);

}  // namespace runnel::broker::admin
