// The broker: its configuration, identity, storage and topics, and the
// state handlers act on. Everything here is used from the broker's one
// event-loop thread; blocking work (fsync) goes to the blocking pool.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "broker/acl_manager.h"
#include "broker/admin/counters.h"
#include "broker/admin/request_metrics.h"
#include "broker/alter_partition_manager.h"
#include "broker/asio.h"
#include "broker/cluster_member.h"
#include "broker/config.h"
#include "broker/delayed_operations.h"
#include "broker/dynamic_broker_config.h"
#include "broker/fetch_session.h"
#include "broker/hosted_partitions.h"
#include "broker/inter_broker_channel.h"
#include "broker/listener_channels.h"
#include "broker/metadata_publisher.h"
#include "broker/request_memory.h"
#include "broker/topic_frontend.h"
#include "broker/topic_table.h"
#include "cluster/local_metadata_store.h"
#include "cluster/metadata_cache.h"
#include "cluster/producer_id_allocator.h"
#include "replication/replica_fetcher.h"
#include "replication/replica_manager.h"
#include "storage/log_manager.h"

namespace runnel::broker {

class Connection;
class QuotaManagers;
class ScramCredentialManager;
namespace group {
class GroupService;
}
namespace transaction {
class TransactionService;
}

class Broker {
 public:
  // Opens the log dirs (recovering after an unclean stop) and the topics.
  // Throws std::runtime_error with a clear message when they cannot be opened.
  Broker(asio::io_context& io, BrokerConfig config);
  ~Broker();

  const BrokerConfig& config() const { return config_; }
  // Replaces one dynamic broker-config layer (checked by the caller),
  // persists it and applies it: the new topic defaults to every partition
  // log, new key or trust stores to their listeners. A listener whose new
  // stores cannot replace its current ones refuses the whole change (Kafka's
  // "Invalid dynamic configuration"); with `validate_only` nothing changes.
  awaitable<TopicError> set_dynamic_configs(ConfigLayer layer, DynamicConfigs configs, bool validate_only = false);
  int32_t node_id() const { return node_id_; }
  const std::string& cluster_id() const { return cluster_id_; }
  asio::io_context& io() { return io_; }
  RequestMemory& request_memory() { return request_memory_; }
  // The topics this broker hosts, with their partitions and typed
  // configs; changes go through topic_frontend(). Each change is published
  // into metadata_cache().
  TopicTable& topics() { return *topics_; }
  // What the cluster says (brokers, controller, topics, leaders, ISR), as
  // the handlers that describe the cluster read it.
  const cluster::MetadataCache& metadata_cache() const { return metadata_cache_; }
  TopicFrontend& topic_frontend() { return topic_frontend_; }
  storage::LogManager& logs() { return *logs_; }
  cluster::ProducerIdAllocator& producer_ids() { return *producer_ids_; }
  // The cluster's metadata (topics, dynamic broker configs, producer-id
  // blocks): etcd with runnel.etcd.endpoints, else the single node's files
  // in the first log dir.
  cluster::MetadataStore& metadata() { return *metadata_; }
  // Whether this broker is one of a cluster (runnel.etcd.endpoints is set):
  // then topics are created by store transactions any broker may write,
  // the metadata image comes from the store's watch, and this broker hosts
  // the partitions the image assigns it (broker/hosted_partitions.h).
  bool in_cluster() const { return in_cluster_; }
  ClusterMember* cluster_member() { return member_.get(); }
  // A cluster leader's ISR changes; null on a single node.
  AlterPartitionManager* alter_partitions() { return alter_partitions_.get(); }
  // What a cluster broker hosts as the metadata image says; null on a single node.
  HostedPartitions* hosted_partitions() { return hosted_.get(); }
  // Requests to other brokers (markers, transaction verification); null on a single node.
  InterBrokerChannel* inter_broker() { return inter_broker_.get(); }
  // Registers in the cluster and loads its metadata, before the listeners
  // accept (their bound ports are what the registration advertises).
  // Throws std::runtime_error when it cannot. Nothing on a single node.
  void join_cluster();
  // Waits until the metadata image reflects `revision` (a write this broker
  // made) and this broker has acted on it; false after `limit`.
  awaitable<bool> wait_for_image(int64_t revision, std::chrono::milliseconds limit);
  group::GroupService& groups() { return *groups_; }
  transaction::TransactionService& transactions() { return *transactions_; }
  // The authorizer and its ACLs; null without authorizer.class.name, when
  // every request is allowed (Kafka without an authorizer).
  AclManager* acls() { return acls_.get(); }
  const security::StandardAuthorizer* authorizer() const { return acls_ ? &acls_->authorizer() : nullptr; }
  // The users' SCRAM credentials (AlterUserScramCredentials), which
  // SASL/SCRAM authenticates against; always there, authorizer or not.
  ScramCredentialManager& scram_credentials() { return *scram_credentials_; }
  // The client quotas (AlterClientQuotas) and the managers that throttle
  // requests over them; always there, and idle while no quota is set.
  QuotaManagers& quotas() { return *quotas_; }
  // Every listener's channel builder, built on first use (Server::bind);
  // throws ConfigError when a listener cannot be set up.
  ListenerChannels& listener_channels();
  // The hosted partitions and the requests waiting on them; every waiting
  // fetch is answered when the broker begins to shut down.
  replication::ReplicaManager& replica_manager() { return *replica_manager_; }
  // Consumers' and followers' incremental fetch sessions (KIP-227).
  FetchSessionCache& fetch_sessions() { return fetch_sessions_; }

  // Runs `fn` on the blocking pool; the returned awaitable resumes the
  // caller on its own executor with fn's result (or fn's exception). Not a
  // coroutine itself, so `fn` never lives in a coroutine frame.
  template <typename F>
  auto run_blocking(F fn) {
    using R = std::invoke_result_t<F>;
    return asio::async_initiate<decltype(use_awaitable), void(std::exception_ptr, R)>(
        [this](auto handler, F fn) {
          asio::post(blocking_, [fn = std::move(fn), handler = std::move(handler)]() mutable {
            std::exception_ptr error;
            R result{};
            try {
              result = fn();
            } catch (...) {
              error = std::current_exception();
            }
            auto ex = asio::get_associated_executor(handler);
            asio::dispatch(ex, [handler = std::move(handler), error, result = std::move(result)]() mutable {
              std::move(handler)(error, std::move(result));
            });
          });
        },
        use_awaitable, std::move(fn));
  }

  // The advertised endpoint clients should use for a listener name.
  const Listener& advertised_listener(const std::string& listener_name) const;
  const std::vector<Listener>& advertised_listeners() const { return advertised_; }
  // Port 0 in a listener binds a free port; the advertised listener of the
  // same name (when it also says 0) then carries the real one.
  void set_bound_port(const std::string& listener_name, uint16_t port);

  void connection_opened(const std::shared_ptr<Connection>& c);
  void connection_closed(const Connection* c);
  size_t connections() const { return connections_.size(); }
  // Closes the open connection, on a listener other than `except`, that
  // was least recently active (Kafka's ConnectionQuotas eviction for the
  // inter-broker listener at max.connections).
  void close_least_recent_connection(const std::string& except);
  // The open connections accepted on one listener (Kafka's connection-count).
  size_t connections(const std::string& listener_name) const;
  // Requests read and not yet answered, over every open connection.
  size_t requests_in_flight() const;
  // Requests read, by API key and version (Kafka's RequestsPerSec).
  admin::RequestCounters& request_counters() { return request_counters_; }
  // Error codes answered, by API key (Kafka's ErrorsPerSec).
  admin::ErrorCounters& error_counters() { return error_counters_; }
  // Request times, by API key and version (Kafka's TotalTimeMs).
  admin::RequestTimes& request_times() { return request_times_; }

  // Starts the periodic storage work (retention, flush, checkpoints).
  void start_background_work();
  // Graceful stop: in a cluster with controlled.shutdown.enable, this
  // broker's leaderships move to other brokers first (ClusterMember::
  // hand_over_leadership). Then every connection stops reading, finishes
  // the request it is serving and sends its queued responses (bounded by
  // request.timeout.ms); the broker leaves the cluster, the logs are
  // flushed and closed with the clean-shutdown marker, and `done` runs.
  void begin_shutdown(std::function<void()> done);
  // Waits for the blocking pool's jobs to end; their completions are then
  // queued on the loop (event_loop.h: drop_pending comes next, at exit).
  void join_blocking_work() { blocking_.join(); }
  bool stopping() const { return stopping_; }

 private:
  // What a new config makes of the TLS listeners (listener_channels.h).
  ListenerChannels::Plan listener_reconfiguration(const BrokerConfig& next, ConfigLayer layer) const;
  // Runs a store call to completion before the loop serves (startup only).
  template <typename T>
  T wait_at_startup(awaitable<T> a);
  void stop_serving();
  awaitable<void> shut_down(bool hand_over, std::function<void()> done);
  awaitable<void> drain_connections();
  // The single node's store and topics, or the cluster's store and its id.
  void open_local_metadata();
  void open_cluster_metadata();
  // The cluster's data path: the replica fetchers, the leader's ISR
  // changes, and the partitions the image assigns this broker.
  void start_replication();
  awaitable<void> storage_ticks();
  awaitable<void> producer_expiration_checks();

  asio::io_context& io_;
  BrokerConfig config_;
  int32_t node_id_;
  std::string cluster_id_;
  std::vector<Listener> advertised_;
  bool in_cluster_ = false;
  RequestMemory request_memory_;
  asio::thread_pool blocking_;
  std::unique_ptr<cluster::MetadataStore> metadata_;
  std::unique_ptr<storage::LogManager> logs_;
  std::unique_ptr<TopicTable> topics_;
  std::unique_ptr<replication::ReplicaManager> replica_manager_;
  FetchSessionCache fetch_sessions_;
  TopicFrontend topic_frontend_{*this};
  cluster::MetadataCache metadata_cache_;
  MetadataPublisher metadata_publisher_{metadata_cache_, cluster_id_, NodeId(node_id_)};
  std::unique_ptr<cluster::ProducerIdAllocator> producer_ids_;
  std::unique_ptr<AclManager> acls_;
  std::unique_ptr<ScramCredentialManager> scram_credentials_;
  std::unique_ptr<QuotaManagers> quotas_;
  std::unique_ptr<ListenerChannels> listener_channels_;
  // In a cluster only.
  std::unique_ptr<replication::ReplicaFetcherManager> fetchers_;
  std::unique_ptr<AlterPartitionManager> alter_partitions_;
  std::unique_ptr<HostedPartitions> hosted_;
  std::unique_ptr<InterBrokerChannel> inter_broker_;
  std::unique_ptr<ClusterMember> member_;
  std::vector<std::weak_ptr<Connection>> connections_;
  admin::RequestCounters request_counters_;
  admin::ErrorCounters error_counters_;
  admin::RequestTimes request_times_;
  bool stopping_ = false;
  // Last, so it is destroyed first: it uses the topics and the logs.
  std::unique_ptr<group::GroupService> groups_;
  std::unique_ptr<transaction::TransactionService> transactions_;
};

}  // namespace runnel::broker
