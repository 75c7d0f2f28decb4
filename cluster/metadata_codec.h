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

// topics/<name>: {"name","id" (base64),"partitions" (count),"configs",
// "assignment" (in a cluster: each partition's replicas)}.
// A partition's state is its own key's (partitions/<name>/<i>) once it has
// one; until its first change (an election, an ISR change) it has none and
// its state is new_partition(assignment[i]): the state it was created in.
// So creating or growing a topic writes one key however many partitions it
// has (etcd refuses a transaction of more than --max-txn-ops, 128 by
// default). Without "assignment" (a single node's topics) every partition
// has one replica, this node.
// The same form is every element of a single node's runnel-topics.json.
struct TopicRecord {
  std::string name;
  Uuid id;
  int32_t partitions = 0;
  TopicConfigs configs;
  std::vector<std::vector<NodeId>> assignment;  // empty, or one replica list per partition
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
