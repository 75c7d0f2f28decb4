// The follower side of replication: Kafka's ReplicaFetcherManager and its
// ReplicaFetcherThreads (AbstractFetcherThread), as coroutines on the
// broker's event loop.
//
// A partition this broker follows is added with its leader and leader
// epoch; it goes to the fetcher for (leader, hash(topic, partition) %
// num.replica.fetchers), one coroutine with one connection to that leader
// (BrokerSender). Each round, a fetcher sends one Fetch for its
// partitions that are ready, each at the follower's log end offset with
// the epoch of its last batch (LastFetchedEpoch), waits up to
// replica.fetch.wait.max.ms on the leader, and for each partition:
//   - records: appended as the leader stored them
//     (Partition::append_records_as_follower), then the follower's high
//     watermark is min(leader's, own log end) and the leader's log start
//     offset is adopted;
//   - DivergingEpoch: truncated to min(the leader's end offset of that
//     epoch, this log's end offset of it) (Kafka's truncateOnFetchResponse),
//     and fetched again from there;
//   - OFFSET_OUT_OF_RANGE: Kafka's handleOutOfRangeError: the leader's
//     log end below ours truncates to it; otherwise a leader's log start
//     above our end starts the log over there;
//   - FENCED_LEADER_EPOCH in the epoch it was asked in: the partition waits
//     for the metadata to add it again at a newer epoch (Kafka's
//     markPartitionFailed);
//   - any other error (NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, a
//     storage error) and any connection failure: the partition (or every
//     partition, for the connection) is retried after replica.fetch.backoff.ms.
// A response for a partition whose epoch or log end changed while the
// request was out (it was re-added, or removed) is dropped.
//
// With runnel.acks.all.fsync (fsync_before_ack), what a round appended is
// fsynced on the blocking pool before the next Fetch is sent, so the
// offset a follower reports is always on its disk, and an acks=all produce
// is acknowledged only once every ISR member has it durably. Without it,
// Kafka's behaviour: the page cache is enough.
//
// Everything is bounded: each request by replica.socket.timeout.ms (the
// leader's long poll included), each wait by the backoff. shutdown()
// cancels the requests in flight and stops every fetcher; the coroutines
// end on their next turn of the loop, holding only their own state, so the
// manager may be destroyed right after it. Event-loop only.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>

namespace boost::asio::ssl {
class context;
}

#include "base/ids.h"
#include "broker/asio.h"
#include "replication/partition.h"
#include "security/sasl/sasl_client.h"

namespace runnel::replication {

using broker::awaitable;
namespace asio = broker::asio;

struct FetcherOptions {
  NodeId self;
  int32_t max_bytes = 1 << 20;            // replica.fetch.max.bytes (per partition)
  int32_t min_bytes = 1;                  // replica.fetch.min.bytes
  int32_t response_max_bytes = 10 << 20;  // replica.fetch.response.max.bytes
  std::chrono::milliseconds max_wait{500};         // replica.fetch.wait.max.ms
  std::chrono::milliseconds backoff{1000};         // replica.fetch.backoff.ms
  std::chrono::milliseconds socket_timeout{30000};  // replica.socket.timeout.ms
  int32_t num_fetchers = 1;                         // num.replica.fetchers
  bool fsync_before_ack = false;                    // runnel.acks.all.fsync
  // The inter-broker listener is SSL: fetch over TLS with this client
  // context, checking the leader's certificate names its host
  // (ssl.endpoint.identification.algorithm=https) when verify_host is set.
  std::shared_ptr<boost::asio::ssl::context> tls;
  bool verify_host = true;
  // The inter-broker listener is SASL_PLAINTEXT or SASL_SSL: authenticate
  // each connection with these.
  std::optional<security::sasl::SaslCredentials> sasl;
};

// Where a broker is reachable (its inter-broker listener endpoint); nullopt when unknown.
using ResolveBroker = std::function<std::optional<std::pair<std::string, uint16_t>>(NodeId)>;
// Runs a blocking call (an fsync) off the event loop and resumes on it with
// the call's result: Broker::run_blocking fits,
//   [&broker](std::function<std::error_code()> fn) { return broker.run_blocking(std::move(fn)); }
using RunBlocking = std::function<awaitable<std::error_code>(std::function<std::error_code()>)>;

class ReplicaFetcherManager {
 public:
  ReplicaFetcherManager(asio::any_io_executor ex, FetcherOptions options, ResolveBroker resolve,
                        std::function<int64_t()> broker_epoch, RunBlocking run_blocking);
  ~ReplicaFetcherManager();
  ReplicaFetcherManager(const ReplicaFetcherManager&) = delete;
  ReplicaFetcherManager& operator=(const ReplicaFetcherManager&) = delete;

  // Follow `leader` for this partition at `leader_epoch` (replaces any
  // previous fetch of it). The fetch starts at the partition's log end.
  void add_partition(std::shared_ptr<Partition> partition, NodeId leader, LeaderEpoch leader_epoch);
  void remove_partition(const std::string& topic, PartitionId id);
  // Stops every fetcher and cancels what they have in flight; bounded.
  void shutdown();

  // Tests and metrics: the partitions being followed, and the fetchers.
  size_t partition_count() const;
  size_t fetcher_count() const { return fetchers_.size(); }

  struct Fetcher;  // replica_fetcher.cc

 private:
  using FetcherKey = std::pair<NodeId, int32_t>;  // the leader, the fetcher index
  int32_t fetcher_index(const std::string& topic, PartitionId id) const;

  asio::any_io_executor ex_;
  std::shared_ptr<const FetcherOptions> options_;
  ResolveBroker resolve_;
  std::function<int64_t()> broker_epoch_;
  RunBlocking run_blocking_;
  std::map<FetcherKey, std::shared_ptr<Fetcher>> fetchers_;
  bool stopped_ = false;
};

}  // namespace runnel::replication
