// Opening partition logs, the disk work of creating a topic or adding
// partitions (mkdir, file creation, fsync of the partition directory:
// milliseconds each). Blocking: the topic front end runs it on the broker's
// blocking pool, so nothing here touches the broker's event-loop state.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "replication/partition.h"
#include "protocol/codec/types.h"
#include "storage/log_manager.h"

namespace runnel::replication {
class ReplicaManager;
}

namespace runnel::broker {

using replication::Partition;
class TopicTable;

// Everything opening a topic's partitions needs, read on the event loop
// beforehand (the broker config and the topic table are the loop's).
struct PartitionSpec {
  std::string topic;
  protocol::Uuid topic_id;
  storage::LogConfig config;
  int32_t node_id = -1;
  int64_t producer_expiration_ms = 0;  // producer.id.expiration.ms
  // A single node's partition leads at epoch 0 once opened; a cluster's
  // waits for the metadata to say whether it leads or follows, and at
  // which epoch (broker/hosted_partitions.h).
  bool single_node = true;
};

struct OpenedPartitions {
  std::vector<std::shared_ptr<Partition>> partitions;
  std::error_code error;
};

// Opens partition `index` of the topic, creating its log if missing, and
// loads its producer state. Used at startup for existing logs too.
storage::Result<std::shared_ptr<Partition>> open_partition(storage::LogManager& logs, const PartitionSpec& spec,
                                                           int32_t index);

// Creates partitions [from, to) of the topic, several side by side (see
// partition_opener.cc). All or nothing: when one
// fails, the logs of those already made (and of the failed one, if storage
// registered it) are closed and removed, so no orphan partition directory
// is left to be reopened at the next start.
OpenedPartitions create_partitions(storage::LogManager& logs, const PartitionSpec& spec, int32_t from, int32_t to);

// A single node's startup: opens every partition of every topic in the
// table and hosts it in the replica manager. The first failure as
// "<topic>-<partition>: <reason>", empty when every partition opened.
std::string open_stored_partitions(storage::LogManager& logs, const TopicTable& topics,
                                   replication::ReplicaManager& hosted);

// Closes and removes the logs of partitions that were never published or
// are no longer (Kafka's "-delete" rename, deleted after file.delete.delay.ms).
void remove_partition_logs(storage::LogManager& logs, const std::string& topic, const std::vector<int32_t>& indexes);
// The same, as work for the broker's blocking pool (Broker::run_blocking
// wants a result; the removal reports its own failures).
std::function<bool()> removing_partition_logs(storage::LogManager& logs, std::string topic, std::vector<int32_t> indexes);

}  // namespace runnel::broker
