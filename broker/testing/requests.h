// Requests the in-process broker tests send often, at the versions they
// use: create a topic, produce a batch to partition 0, fetch partition 0.
#pragma once

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "broker/testing/kafka_client.h"
#include "protocol/error_codes.h"
#include "protocol/messages/00_produce.h"
#include "protocol/messages/01_fetch.h"
#include "protocol/messages/19_create_topics.h"
#include "protocol/records/batch_builder.h"

namespace runnel::broker::testing {

inline constexpr int16_t kCreateTopicsVersion = 7;
inline constexpr int16_t kProduceVersion = 11;
inline constexpr int16_t kFetchVersion = 12;  // the last version that names topics rather than ids

inline void create_topic(KafkaClient& client, const std::string& name, int32_t partitions,
                         const std::vector<std::pair<std::string, std::string>>& configs = {}) {
  protocol::CreateTopicsRequest req;
  protocol::CreateTopicsRequest::CreatableTopic topic;
  topic.name = name;
  topic.num_partitions = partitions;
  topic.replication_factor = 1;
  for (const auto& [key, value] : configs) {
    auto& c = topic.configs.emplace_back();
    c.name = key;
    c.value = value;
  }
  req.topics.push_back(topic);
  auto resp = client.call<protocol::CreateTopicsApi>(req, kCreateTopicsVersion);
  REQUIRE(resp.topics.size() == 1);
  REQUIRE(resp.topics[0].error_code == protocol::code(protocol::ErrorCode::none));
}

inline protocol::Bytes batch_of(const std::vector<std::string>& values) {
  std::vector<protocol::records::Record> recs(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    recs[i].offset_delta = static_cast<int32_t>(i);
    recs[i].timestamp_delta = static_cast<int64_t>(i);
    recs[i].value = protocol::ByteView(reinterpret_cast<const uint8_t*>(values[i].data()), values[i].size());
  }
  protocol::records::BatchSpec spec;
  spec.base_timestamp = 1'700'000'000'000;
  return protocol::records::build_batch(spec, recs);
}

inline protocol::ProduceRequest produce_request(const std::string& topic, const protocol::Bytes& batch,
                                                int16_t acks = -1) {
  protocol::ProduceRequest req;
  req.acks = acks;
  req.timeout_ms = 30000;
  protocol::ProduceRequest::TopicProduceData t;
  t.name = topic;
  protocol::ProduceRequest::TopicProduceData::PartitionProduceData part;
  part.index = 0;
  part.records = protocol::Records::view(protocol::ByteView(batch.data(), batch.size()));
  t.partition_data.push_back(part);
  req.topic_data.push_back(t);
  return req;
}

inline protocol::ProduceResponse produce(KafkaClient& client, const std::string& topic, const protocol::Bytes& batch) {
  return client.call<protocol::ProduceApi>(produce_request(topic, batch), kProduceVersion);
}

inline protocol::FetchRequest fetch_request(const std::string& topic, int64_t offset, int32_t max_wait_ms) {
  protocol::FetchRequest req;
  req.max_wait_ms = max_wait_ms;
  req.min_bytes = 1;
  protocol::FetchRequest::FetchTopic t;
  t.topic = topic;
  protocol::FetchRequest::FetchTopic::FetchPartition part;
  part.partition = 0;
  part.fetch_offset = offset;
  part.partition_max_bytes = 1 << 20;
  t.partitions.push_back(part);
  req.topics.push_back(t);
  return req;
}

}  // namespace runnel::broker::testing
