// The REST endpoints' way into the broker: they are one more client of the
// Kafka handlers, so a REST record meets exactly what a Kafka producer's
// does. A topic is looked up with the Metadata handler (which auto-creates
// it when auto.create.topics.enable allows, with the same ACL checks), and
// records are appended with the Produce handler: acks=all (the Java
// producer's default since Kafka 3.0), its validation, min.insync.replicas,
// and the fsync of runnel.acks.all.fsync before the answer.
//
// Partitions are chosen as REST Proxy's Java producer chooses them: the
// record's own partition, else murmur2 of a key (protocol/records/key_partitioner.h),
// else the topic's sticky partition for the unkeyed records, which moves
// on round-robin once kStickyBytes went to it (the built-in partitioner
// sticks to a partition until batch.size bytes, 16 KiB by default). Each partition's records of one call are one
// RecordBatch (uncompressed, no producer id: there is no client to retry).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "broker/admin/rest/rest_error.h"
#include "broker/admin/rest/rest_record.h"
#include "broker/asio.h"
#include "security/principal.h"

namespace runnel::broker {
class Broker;
}

namespace runnel::broker::admin::rest {

// Who is asking: the peer's address, for ACL host checks, and the
// principal the admin listener gave the request (admin_auth.h): a Basic
// user or a TLS client certificate's, else User:ANONYMOUS as on a
// PLAINTEXT Kafka listener.
struct RestClient {
  std::string host;
  security::KafkaPrincipal principal;
};

class RecordProducer {
 public:
  explicit RecordProducer(Broker& broker) : broker_(broker) {}

  // The topic's partition count, creating the topic where the broker's
  // auto-creation rules allow, or the error REST Proxy answers (40401,
  // 40301, ...).
  awaitable<std::variant<int32_t, RestError>> partitions_of(const RestClient& client, const std::string& topic);

  // Appends `records` to `topic` (of `partitions` partitions) and answers
  // one outcome per record, in order.
  awaitable<std::vector<RecordOutcome>> produce(const RestClient& client, const std::string& topic,
                                                int32_t partitions, const std::vector<RestRecord>& records);

  Broker& broker() { return broker_; }

 private:
  static constexpr size_t kStickyBytes = 16 * 1024;
  struct Sticky {
    uint32_t partition = 0;
    size_t bytes = 0;  // sent to it since it became sticky
  };
  // The unkeyed record's partition, counting its bytes against it.
  int32_t sticky_partition(const std::string& topic, int32_t partitions, size_t bytes);

  Broker& broker_;
  std::unordered_map<std::string, Sticky> sticky_;
};

}  // namespace runnel::broker::admin::rest
