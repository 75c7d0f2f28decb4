// The JSON values of the metadata keys (etcd/key_layout.h) that make up a
// metadata image: topics, partitions, brokers and the controller. One
// place writes and reads each, so the local store, etcd and every broker
// agree on the bytes. Decoding never throws: a malformed value is an
// error message, and the loader leaves that key out of the image.
#pragma once

#include <optional>
#include <string>
#include <variant>

#include "cluster/metadata_image.h"

namespace runnel::cluster {

template <typename T>
using Decoded = std::variant<T, std::string>;  // the value, or why it could not be read

// topics/<name>: {"name","id" (base64),"partitions" (count),"configs"}.
// The partitions come from their own keys; a topic's partition count says
// how many there are.
// The same form is every element of a single node's runnel-topics.json.
struct TopicRecord {
  std::string name;
  Uuid id;
  int32_t partitions = 0;
  TopicConfigs configs;
};
std::string encode_topic(const TopicRecord& t);
std::string encode_topic(const TopicImage& t);
Decoded<TopicRecord> decode_topic(const std::string& json);

std::string encode_partition(const PartitionRegistration& p);
Decoded<PartitionRegistration> decode_partition(const std::string& json);

std::string encode_broker(const BrokerRegistration& b);
Decoded<BrokerRegistration> decode_broker(const std::string& json);

// controller: {"id": node id}.
std::string encode_controller(NodeId id);
Decoded<NodeId> decode_controller(const std::string& json);

}  // namespace runnel::cluster
