// REST Proxy v2's consumer bodies and answers (v2_consumers.cc serves them):
//
//   create       {"name": "c1", "format": "binary", "auto.offset.reset": "earliest",
//                 "auto.commit.enable": "false", "fetch.min.bytes": "1",
//                 "consumer.request.timeout.ms": "1000"}   every field optional
//                 -> {"instance_id": "c1", "base_uri": "http://host/consumers/g/instances/c1"}
//   subscription {"topics": ["a", "b"]} or {"topic_pattern": "a.*"}
//                 -> GET {"topics": [...]}
//   assignments  {"partitions": [{"topic": "a", "partition": 0}]}   (also seek to
//                 beginning / end, and GET offsets' body)
//   positions    {"offsets": [{"topic": "a", "partition": 0, "offset": 5}],
//                 "timestamps": [{"topic": "a", "partition": 0, "timestamp": "2026-12-07T12:00:00Z"}]}
//   offsets      POST {"offsets": [...]} with each partition's last consumed
//                 offset (REST Proxy commits offset + 1), or no body: all
//                 handed out; answered 200 []. GET answers
//                 {"offsets": [{"topic", "partition", "offset", "metadata"}]},
//                 the committed (next) offsets, partitions without one left out.
//   records      [{"topic", "key", "value", "partition", "offset"}], key and
//                 value base64 (binary) or embedded JSON (json), null for null.
// Config values may be given as JSON strings, as REST Proxy's examples do,
// or as numbers and booleans. A body that parses but is none of these is 422.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <boost/json/value.hpp>

#include "broker/admin/rest/consumer_instance.h"

namespace runnel::broker::admin::rest {

struct CreateConsumerRequest {
  std::optional<std::string> name;
  ConsumerInstanceConfig config;
};
std::variant<CreateConsumerRequest, RestError> parse_create_consumer(const boost::json::value& body);

// Neither set: a body that subscribes to nothing new (204, no change).
struct SubscriptionRequest {
  std::optional<std::vector<std::string>> topics;
  std::optional<std::string> topic_pattern;
};
std::variant<SubscriptionRequest, RestError> parse_subscription(const boost::json::value& body);

std::variant<std::vector<TopicPartition>, RestError> parse_partitions(const boost::json::value& body);
std::variant<std::map<TopicPartition, int64_t>, RestError> parse_offsets(const boost::json::value& body);

// POST positions: offsets to seek to and ISO 8601 timestamps whose first
// offset to seek to (REST Proxy's ConsumerSeekRequest).
struct SeekRequest {
  std::map<TopicPartition, int64_t> offsets;
  std::map<TopicPartition, int64_t> timestamps;  // epoch ms
};
std::variant<SeekRequest, RestError> parse_seek(const boost::json::value& body);

std::string create_consumer_answer(const std::string& instance_id, const std::string& base_uri);
std::string topics_answer(const std::vector<std::string>& topics);
std::string partitions_answer(const std::vector<TopicPartition>& partitions);
std::string committed_answer(const std::vector<TopicPartition>& asked,
                             const std::map<TopicPartition, std::pair<int64_t, std::string>>& committed);
// 50002 when a json-format record's key or value is not JSON.
std::variant<std::string, RestError> records_answer(const std::vector<ConsumedRestRecord>& records, EmbeddedFormat format);

}  // namespace runnel::broker::admin::rest
