// A batching, idempotent Kafka producer (the Java producer's
// RecordAccumulator + Sender, single-threaded): records collect per
// partition into batches of up to batch.size bytes; a batch is sealed when
// full or once linger.ms has passed, then sent to its partition's leader,
// one Produce request per leader with at most one batch per partition
// (Kafka refuses more with v3+). With idempotence (the default, as in
// Kafka 3.0+) the producer takes a producer id (InitProducerId) and numbers
// each partition's batches, so a batch re-sent after a lost response or a
// leader change is written once. Retriable errors are retried at most
// `retries` times with the same bytes.
#pragma once

#include <chrono>
#include <climits>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/cluster.h"
#include "cli/partitioner.h"
#include "protocol/records/batch_format.h"

namespace runnel::cli {

struct ProducerRecord {
  std::string topic;
  std::optional<int32_t> partition;  // nullopt: the partitioner decides
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
  int64_t timestamp_ms = -1;  // -1: now
};

struct ProducerOptions {
  int16_t acks = -1;  // 0, 1, -1 (all)
  protocol::records::Compression compression = protocol::records::Compression::none;
  bool idempotent = true;
  size_t batch_size = 1000000;
  std::chrono::milliseconds linger{5};
  // Produce requests a leader may have unanswered (Kafka's
  // max.in.flight.requests.per.connection, at most 5 with idempotence).
  // 1 by default: a broker that restarts from a snapshot knows only a
  // producer's last batch (Kafka's snapshots hold one), so with more in
  // flight a retry of an earlier written batch can be refused as
  // OUT_OF_ORDER_SEQUENCE_NUMBER instead of being recognised as a duplicate
  // (cli_test's restart case failed so with 5).
  size_t max_in_flight = 1;
  // As the Java producer: retriable failures are retried until
  // delivery.timeout.ms has passed since the batch was sealed (or `retries`
  // attempts, when given).
  int retries = INT32_MAX;
  std::chrono::milliseconds delivery_timeout{120000};
};

class Producer {
 public:
  Producer(Cluster& cluster, ProducerOptions options);

  // Queues `record`; sends whatever batches are full or have lingered.
  void send(ProducerRecord record);
  // Sends batches whose linger has passed.
  void poll();
  // Sends everything queued and waits for every answer.
  void flush();
  // How long until the oldest open batch must go (nullopt: none open).
  std::optional<std::chrono::milliseconds> time_to_linger() const;

  uint64_t records_sent() const { return records_sent_; }
  uint64_t bytes_sent() const { return bytes_sent_; }

 private:
  struct OwnedRecord {
    std::optional<std::string> key, value;
    std::vector<std::pair<std::string, std::optional<std::string>>> headers;
    int64_t timestamp_ms;
  };
  struct Batch {
    std::string topic;
    int32_t partition = 0;
    std::vector<OwnedRecord> records;
    size_t bytes = 0;  // payload estimate, for batch.size
    std::chrono::steady_clock::time_point opened;
    protocol::Bytes built;  // once sealed
    std::chrono::steady_clock::time_point sealed_at;
    int attempts = 0;
  };
  using PartitionKey = std::pair<std::string, int32_t>;
  // One Produce request on its way to a leader, with the batches it carries.
  struct InFlight {
    BrokerConnection* conn;
    std::vector<Batch> batches;
    int32_t correlation_id = 0;
    int16_t version = 0;
  };

  int32_t choose_partition(const ProducerRecord& r);
  int32_t partition_count(const std::string& topic);
  void seal(const PartitionKey& key);
  void seal_lingered(bool all);
  // Sends a Produce request to each leader with its sealed batches (at
  // most one per partition), once fewer than max_in_flight rounds are
  // unanswered. Requests to a leader go on one connection, answered in
  // order, so a partition's batches are written in sequence order.
  void send_round();
  // Waits for the oldest rounds' answers until fewer than `keep` are in
  // flight. After a failure every round is collected, so the failed batches
  // and the later ones of their partitions (refused as out of order) go
  // back to the front of sealed_ in sequence order; a batch that cannot be
  // retried ends the producer (KafkaError).
  void collect(size_t keep = 0);
  // Puts failed batches back at the front of sealed_, then backs off.
  void requeue(std::vector<Batch>& retry);
  void retry_or_fail(Batch&& b, int16_t code, const std::string& message, std::vector<Batch>& retry);
  // Counts an acknowledged batch, or files it under retry/failure.
  void settle(Batch&& b, int16_t code, const std::string& message, std::vector<Batch>& retry,
              std::set<PartitionKey>& failed);
  void init_producer_id();

  Cluster& cluster_;
  ProducerOptions options_;
  StickyPartitioner sticky_;
  std::map<std::string, int32_t> partition_counts_;
  std::map<PartitionKey, Batch> open_;
  std::deque<Batch> sealed_;
  std::deque<std::vector<InFlight>> rounds_;  // oldest first
  std::map<PartitionKey, int32_t> next_sequence_;
  int64_t producer_id_ = -1;
  int16_t producer_epoch_ = -1;
  uint64_t records_sent_ = 0;
  uint64_t bytes_sent_ = 0;
};

// "none|gzip|snappy|lz4|zstd"; UsageError otherwise.
protocol::records::Compression parse_compression(const std::string& name);

}  // namespace runnel::cli
