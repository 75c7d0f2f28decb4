#include "broker/broker.h"

#include <algorithm>

#include "base/clock.h"
#include "broker/connection.h"
#include "broker/group/group_service.h"
#include "broker/transaction/transaction_service.h"
#include "broker/logging.h"
#include "broker/quota_managers.h"
#include "broker/scram_credential_manager.h"
#include "broker/security_config.h"
#include "replication/fetcher_options.h"
#include "cluster/etcd/etcd_metadata_store.h"
#include "cluster/etcd/key_layout.h"
#include "storage/meta_properties.h"
#include "storage/uuid_text.h"

namespace runnel::broker {

namespace {

int64_t now_ms() { return runnel::Clock::system().wall_ms(); }

// The cluster id the log dirs already belong to, or a new one.
std::string find_cluster_id(const BrokerConfig& config) {
  for (const auto& dir : config.log_dirs()) {
    auto meta = storage::read_meta_properties(dir);
    if (meta) return meta->cluster_id;
  }
  if (auto id = config.get_optional("cluster.id")) return *id;
  return storage::uuid_to_base64(storage::random_uuid());
}

std::unique_ptr<storage::LogManager> open_logs(const BrokerConfig& config, const std::string& cluster_id,
                                               const storage::LogConfig& defaults) {
  storage::LogManagerOptions o;
  for (const auto& d : config.log_dirs()) o.log_dirs.emplace_back(d);
  o.default_config = defaults;
  o.cluster_id = cluster_id;
  o.node_id = config.node_id();
  o.retention_check_interval_ms = config.get_long("log.retention.check.interval.ms");
  o.checkpoint_interval_ms = config.get_int("log.flush.offset.checkpoint.interval.ms");
  o.cleaner_enable = config.get_bool("log.cleaner.enable");
  // Each partition is loaded when its topic asks for it, with the topic's
  // config; directories no topic asks for are set aside, not opened.
  o.load_on_demand = true;
  o.recovery_threads_per_dir = config.get_int("num.recovery.threads.per.data.dir");
  // Kafka's LogManager.handleLogDirFailure words, so operators' alerts match.
  o.on_dir_failure = [](const std::filesystem::path& dir, std::error_code ec) {
    RLOG_ERROR("Stopping serving logs in dir %s after an I/O error (%s): its partitions are offline until a restart",
               dir.c_str(), ec.message().c_str());
  };
  auto logs = storage::LogManager::open(std::move(o));
  if (!logs) throw std::runtime_error("cannot open log.dirs: " + logs.error().message());
  for (const auto& d : (*logs)->set_aside()) RLOG_WARN("not loading %s: %s", d.path.c_str(), d.reason.c_str());
  return std::move(*logs);
}

}  // namespace

Broker::Broker(asio::io_context& io, BrokerConfig config)
    : io_(io),
      config_(std::move(config)),
      node_id_(config_.node_id()),
      cluster_id_(find_cluster_id(config_)),
      advertised_(config_.advertised_listeners()),
      request_memory_(io.get_executor(),
                      config_.get_long("queued.max.request.bytes") > 0
                          ? static_cast<size_t>(config_.get_long("queued.max.request.bytes"))
                          : 0),
      blocking_(static_cast<size_t>(config_.get_int("num.io.threads"))),
      fetch_sessions_(static_cast<size_t>(config_.get_int("max.incremental.fetch.session.cache.slots"))) {
  for (const auto& d : config_.log_dirs()) std::filesystem::create_directories(d);
  in_cluster_ = !config_.get_list("runnel.etcd.endpoints").empty();
  if (in_cluster_) open_cluster_metadata();
  else open_local_metadata();
  {
    auto value = [this](const std::string& key) -> std::optional<std::string> {
      auto kv = wait_at_startup(metadata_->get(key));
      if (!kv) throw std::runtime_error("cannot read dynamic broker configs: " + kv.error().message());
      return *kv ? std::optional<std::string>((*kv)->value) : std::nullopt;
    };
    load_dynamic_configs(config_, value(cluster::keys::broker_config(NodeId(node_id_))),
                         value(cluster::keys::cluster_default_config()));
  }
  if (authorizer_configured(config_)) {
    acls_ = std::make_unique<AclManager>(*metadata_, config_);
    if (auto ec = wait_at_startup(acls_->load())) throw std::runtime_error("cannot load the ACLs: " + ec.message());
  }
  scram_credentials_ = std::make_unique<ScramCredentialManager>(*metadata_);
  if (auto ec = wait_at_startup(scram_credentials_->load()))
    throw std::runtime_error("cannot load the SCRAM credentials: " + ec.message());
  quotas_ = std::make_unique<QuotaManagers>(*metadata_, config_);
  if (auto ec = wait_at_startup(quotas_->stored().load()))
    throw std::runtime_error("cannot load the client quotas: " + ec.message());
  logs_ = open_logs(config_, cluster_id_, TopicConfig::build(config_, {}).log);
  replica_manager_ = std::make_unique<replication::ReplicaManager>(io.get_executor(), metadata_cache_, NodeId(node_id_));
  topics_ = std::make_unique<TopicTable>(config_, *replica_manager_);
  if (!in_cluster()) {
    auto stored = wait_at_startup(metadata_->range(cluster::keys::kTopicsPrefix));
    if (!stored) throw std::runtime_error("cannot load topics: " + stored.error().message());
    if (auto ec = topics_->load(stored->kvs)) throw std::runtime_error("cannot load topics: " + ec.message());
    // A single node hosts every partition of every stored topic.
    if (auto why = open_stored_partitions(*logs_, *topics_, *replica_manager_); !why.empty())
      throw std::runtime_error("cannot load topics: " + why);
    // Kafka's metadata publishers: the replica manager acts on each change.
    metadata_cache_.subscribe([rm = replica_manager_.get()](const cluster::MetadataDelta& d) { rm->apply_delta(d); });
    metadata_publisher_.publish_all(broker_registration(config_, advertised_), *topics_, *replica_manager_);
    topics_->on_change([this](const std::string& name) {
      metadata_publisher_.topic_changed(*topics_, *replica_manager_, name);
    });
    // Kafka's stray logs: partition directories no stored topic claims
    // (a creation that failed halfway, a crash mid-delete).
    for (const auto& d : logs_->set_aside_strays()) RLOG_WARN("stray log %s: %s", d.path.c_str(), d.reason.c_str());
  } else {
    start_replication();
    metadata_cache_.subscribe([this](const cluster::MetadataDelta& d) { hosted_->on_image(d.after()); });
  }
  producer_ids_ = std::make_unique<cluster::ProducerIdAllocator>(*metadata_);
  if (auto ec = wait_at_startup(producer_ids_->load()))
    throw std::runtime_error("cannot read runnel-producer-ids: " + ec.message());
  groups_ = std::make_unique<group::GroupService>(*this);
  transactions_ = std::make_unique<transaction::TransactionService>(*this);
}

Broker::~Broker() { blocking_.join(); }

void Broker::open_local_metadata() {
  auto local = std::make_unique<cluster::LocalMetadataStore>(io_.get_executor(), blocking_.get_executor(),
                                                             config_.log_dirs().front(), NodeId(node_id_));
  const auto opened = local->open();
  for (const auto& w : local->warnings()) RLOG_WARN("%s", w.c_str());
  if (opened) throw std::runtime_error("cannot load topics: " + opened.message());
  metadata_ = std::move(local);
}

void Broker::open_cluster_metadata() {
  std::string endpoints;
  for (const auto& e : config_.get_list("runnel.etcd.endpoints")) endpoints += (endpoints.empty() ? "" : ",") + e;
  auto parsed = cluster::etcd::parse_endpoints(endpoints);
  if (!parsed) throw ConfigError("Invalid value " + endpoints + " for configuration runnel.etcd.endpoints: " +
                                 parsed.error().message());
  if (node_id_ < 0) throw ConfigError("node.id must be set (0 or more) when runnel.etcd.endpoints is");
  std::string prefix = config_.get_string("runnel.etcd.prefix");
  if (prefix.empty() || prefix.back() != '/') prefix += '/';
  metadata_ = std::make_unique<cluster::etcd::EtcdMetadataStore>(
      io_.get_executor(), std::move(*parsed), prefix,
      std::chrono::milliseconds(config_.get_int("runnel.etcd.request.timeout.ms")));
  // The cluster's id is the first broker's (its log dirs', cluster.id, or
  // new); every other broker adopts it, and one whose log dirs belong to
  // another cluster refuses to start, as Kafka's InconsistentClusterIdException.
  const auto dirs = config_.log_dirs();  // a new vector at each call
  const bool dirs_formatted = std::any_of(dirs.begin(), dirs.end(), [](const auto& d) {
    return static_cast<bool>(storage::read_meta_properties(d));
  });
  auto claimed = wait_at_startup(metadata_->compare_and_swap(cluster::keys::kClusterId, cluster::kAbsent, cluster_id_));
  if (!claimed) throw std::runtime_error("cannot reach etcd at " + endpoints + ": " + claimed.error().message());
  if (!claimed->succeeded) {
    auto stored = wait_at_startup(metadata_->get(cluster::keys::kClusterId));
    if (!stored || !*stored) throw std::runtime_error("cannot read the cluster id from etcd");
    if (dirs_formatted && (*stored)->value != cluster_id_)
      throw std::runtime_error("The cluster id " + (*stored)->value + " in etcd does not match the cluster id " +
                               cluster_id_ + " of log.dirs");
    cluster_id_ = (*stored)->value;
  }
}

void Broker::start_replication() {
  // Followers fetch from their leader's endpoint on the inter-broker
  // listener (inter.broker.listener.name, else security.inter.broker.protocol's,
  // else the first listener), over TLS when it is SSL or SASL_SSL.
  const std::string listener = inter_broker_listener(config_, advertised_.front().name);
  auto resolve = [this, listener](NodeId node) -> std::optional<std::pair<std::string, uint16_t>> {
    const cluster::BrokerRegistration* b = metadata_cache_->broker(node);
    const cluster::BrokerEndpoint* e = b ? endpoint_for(*b, listener) : nullptr;
    if (!e) return std::nullopt;
    return std::make_pair(e->host, e->port);
  };
  auto broker_epoch = [this] { return member_ ? member_->broker_epoch() : int64_t{-1}; };
  auto blocking = [this](std::function<std::error_code()> fn) { return run_blocking(std::move(fn)); };
  auto options = replication::fetcher_options(config_, NodeId(node_id_));
  options.tls = inter_broker_ssl_context(config_, listener);
  // Kafka's ssl.endpoint.identification.algorithm: "https" checks the
  // leader's certificate against its host; empty does not.
  options.verify_host = listener_value(config_, listener, "ssl.endpoint.identification.algorithm").value_or("") == "https";
  if (options.tls)
    RLOG_INFO("replica fetchers connect over TLS on listener %s (host name checked: %s)", listener.c_str(),
              options.verify_host ? "yes" : "no");
  // A SASL inter-broker listener: authenticate as the JAAS line's user.
  options.sasl = inter_broker_sasl(config_, listener);
  if (options.sasl)
    RLOG_INFO("replica fetchers authenticate on listener %s with SASL %s as %s", listener.c_str(),
              options.sasl->mechanism.c_str(), options.sasl->username.c_str());
  // The other requests brokers send each other take the same listener.
  InterBrokerChannel::Options channel;
  channel.client_id = "broker-" + std::to_string(node_id_) + "-channel";
  // Above request.timeout.ms, which bounds the peer's acks=all marker append.
  channel.timeout = std::chrono::milliseconds(config_.get_int("request.timeout.ms") + 5000);
  channel.tls = options.tls;
  channel.verify_host = options.verify_host;
  channel.sasl = options.sasl;
  inter_broker_ = std::make_unique<InterBrokerChannel>(io_.get_executor(), std::move(channel), resolve);
  fetchers_ = std::make_unique<replication::ReplicaFetcherManager>(io_.get_executor(), std::move(options), resolve,
                                                                   broker_epoch, blocking);
  alter_partitions_ =
      std::make_unique<AlterPartitionManager>(*this, std::chrono::milliseconds(config_.get_long("replica.lag.time.max.ms")));
  Followers followers{
      [this](std::shared_ptr<replication::Partition> p, NodeId leader, LeaderEpoch epoch) {
        fetchers_->add_partition(std::move(p), leader, epoch);
      },
      [this](const std::string& topic, PartitionId id) { fetchers_->remove_partition(topic, id); }};
  hosted_ = std::make_unique<HostedPartitions>(*this, std::move(followers));
}

void Broker::join_cluster() {
  if (!in_cluster_) return;
  ClusterMemberOptions o;
  o.registry.session_timeout = std::chrono::milliseconds(config_.get_int("broker.session.timeout.ms"));
  o.registry.heartbeat_interval = std::chrono::milliseconds(config_.get_int("broker.heartbeat.interval.ms"));
  o.controller.unclean_leader_election = config_.get_bool("unclean.leader.election.enable");
  o.controller.auto_leader_rebalance = config_.get_bool("auto.leader.rebalance.enable");
  o.controller.imbalance_check_interval =
      std::chrono::seconds(config_.get_long("leader.imbalance.check.interval.seconds"));
  o.controller.imbalance_percentage = config_.get_int("leader.imbalance.per.broker.percentage");
  // Dynamic broker configs set through any broker reach every broker (the
  // cluster-wide default) or the one they name, as Kafka's do.
  auto config_changed = [this](const std::string& key, const std::optional<std::string>& value) {
    const bool cluster_default = key == cluster::keys::cluster_default_config();
    if (!cluster_default && key != cluster::keys::broker_config(NodeId(node_id_))) return;
    const ConfigLayer layer = cluster_default ? ConfigLayer::dynamic_default : ConfigLayer::dynamic_broker;
    if (!value) config_.set_dynamic_configs(layer, {});
    else if (cluster_default) load_dynamic_configs(config_, std::nullopt, value);
    else load_dynamic_configs(config_, value, std::nullopt);
    topics_->apply_broker_defaults();
    // This broker's own AlterConfigs applied its stores already; this is
    // the store's copy (or another writer's), applied if it differs.
    ListenerChannels::Plan tls = listener_reconfiguration(config_, layer);
    if (!tls.error.empty()) RLOG_ERROR("dynamic broker configs could not be applied: %s", tls.error.c_str());
    else if (listener_channels_) listener_channels_->apply(std::move(tls));
  };
  ClusterMemberHooks hooks{[this] { hosted_->fence(); }, [this] { hosted_->unfence(); }, config_changed, {}};
  // ACLs created or deleted through any broker apply on every broker.
  if (acls_)
    hooks.acls_changed = [this](const std::optional<std::string>& value, int64_t revision) {
      acls_->stored_changed(value, revision);
    };
  // So are SCRAM credentials altered through any broker.
  hooks.scram_credentials_changed = [this](const std::optional<std::string>& value, int64_t revision) {
    scram_credentials_->stored_changed(value, revision);
  };
  // And client quotas.
  hooks.client_quotas_changed = [this](const std::optional<std::string>& value, int64_t revision) {
    quotas_->stored().stored_changed(value, revision);
  };
  member_ = std::make_unique<ClusterMember>(*metadata_, metadata_cache_, cluster_id_, NodeId(node_id_), o, std::move(hooks));
  // A restarted broker waits out its previous session (at most one session
  // timeout) before it can register again.
  const auto limit = 2 * o.registry.session_timeout + std::chrono::milliseconds(config_.get_int("runnel.etcd.request.timeout.ms"));
  if (auto ec = wait_at_startup(member_->start(broker_registration(config_, advertised_), limit)))
    throw std::runtime_error("cannot join the cluster: " + ec.message());
  // Serve once the image has this broker (the watch brings its own
  // registration back), so no client is told of a cluster without it.
  std::function<bool()> registered = [this] {
    return metadata_cache_->broker(NodeId(node_id_)) && hosted_->caught_up();
  };
  if (!wait_at_startup(poll_until(std::move(registered), std::chrono::milliseconds(10), limit)))
    throw std::runtime_error("cannot join the cluster: its metadata never showed this broker registered");
  // Now that this broker has opened every replica the image assigns it,
  // what is left on disk belongs to topics deleted (or replicas moved)
  // while it was down.
  auto assigned = [this](const storage::TopicPartition& tp) {
    const cluster::PartitionRegistration* p = metadata_cache_->partition(tp.topic, PartitionId(tp.partition));
    return p && p->is_replica(NodeId(node_id_));
  };
  for (const auto& d : logs_->delete_strays(assigned)) RLOG_WARN("%s: %s", d.path.c_str(), d.reason.c_str());
  RLOG_INFO("node %d joined cluster %s: %zu live broker(s), controller %d", node_id_, cluster_id_.c_str(),
            metadata_cache_->live_brokers().size(),
            metadata_cache_->controller() ? metadata_cache_->controller()->value() : -1);
}

awaitable<bool> Broker::wait_for_image(int64_t revision, std::chrono::milliseconds limit) {
  // Polled: an image and the reconciliation after it each end the wait,
  // and a topic change takes milliseconds of etcd and disk work anyway.
  std::function<bool()> reflected = [this, revision] {
    return metadata_cache_->revision() >= revision && (!hosted_ || hosted_->caught_up());
  };
  co_return co_await poll_until(std::move(reflected), std::chrono::milliseconds(10), limit);
}

template <typename T>
T Broker::wait_at_startup(awaitable<T> a) {
  std::optional<T> out;
  std::exception_ptr error;
  bool done = false;
  auto body = [](awaitable<T> a, std::optional<T>* out) -> awaitable<void> { out->emplace(co_await std::move(a)); };
  auto work = asio::make_work_guard(io_);
  asio::co_spawn(io_, body(std::move(a), &out), [&](std::exception_ptr e) {
    error = e;
    done = true;
  });
  while (!done) io_.run_one();
  work.reset();
  io_.restart();
  if (error) std::rethrow_exception(error);
  return std::move(*out);
}

ListenerChannels& Broker::listener_channels() {
  if (!listener_channels_) {
    // SASL/SCRAM looks users up in the broker's credential store, which
    // AlterUserScramCredentials changes on every broker at once.
    ScramCredentialLookup scram = [this](const std::string& user, security::sasl::ScramMechanism mechanism) {
      return scram_credentials_->credential(user, mechanism);
    };
    listener_channels_ = std::make_unique<ListenerChannels>(config_, std::move(scram));
  }
  return *listener_channels_;
}

ListenerChannels::Plan Broker::listener_reconfiguration(const BrokerConfig& next, ConfigLayer layer) const {
  if (!listener_channels_) return {};
  // Kafka reloads a rewritten store file on a per-broker update only.
  return listener_channels_->plan(next, layer == ConfigLayer::dynamic_broker);
}

awaitable<TopicError> Broker::set_dynamic_configs(ConfigLayer layer, DynamicConfigs configs, bool validate_only) {
  BrokerConfig next = config_;
  next.set_dynamic_configs(layer, std::move(configs));
  ListenerChannels::Plan tls = listener_reconfiguration(next, layer);
  if (!tls.error.empty()) {
    RLOG_WARN("dynamic broker configs refused: %s", tls.error.c_str());
    co_return TopicError{protocol::ErrorCode::invalid_request, "Invalid dynamic configuration"};
  }
  if (validate_only) co_return TopicError{};
  config_ = std::move(next);
  topics_->apply_broker_defaults();
  if (listener_channels_) listener_channels_->apply(std::move(tls));
  const std::string key = layer == ConfigLayer::dynamic_default ? cluster::keys::cluster_default_config()
                                                                : cluster::keys::broker_config(NodeId(node_id_));
  auto written = co_await metadata_->put(key, dynamic_configs_value(config_, layer));
  if (!written) co_return TopicError{protocol::ErrorCode::kafka_storage_error, written.error().message()};
  RLOG_INFO("dynamic broker configs (%s) now: %zu set",
            layer == ConfigLayer::dynamic_default ? "cluster default" : "this broker",
            config_.dynamic_configs(layer).size());
  co_return TopicError{};
}

const Listener& Broker::advertised_listener(const std::string& listener_name) const {
  for (const auto& l : advertised_)
    if (l.name == listener_name) return l;
  return advertised_.front();
}

void Broker::set_bound_port(const std::string& listener_name, uint16_t port) {
  bool changed = false;
  for (auto& l : advertised_)
    if (l.name == listener_name && l.port == 0) {
      l.port = port;
      changed = true;
    }
  if (changed) metadata_publisher_.broker_changed(broker_registration(config_, advertised_));
}

void Broker::connection_opened(const std::shared_ptr<Connection>& c) { connections_.push_back(c); }

size_t Broker::connections(const std::string& listener_name) const {
  size_t n = 0;
  for (const auto& w : connections_)
    if (auto c = w.lock(); c && c->listener_name() == listener_name) ++n;
  return n;
}

size_t Broker::requests_in_flight() const {
  size_t n = 0;
  for (const auto& w : connections_)
    if (auto c = w.lock()) n += c->unanswered();
  return n;
}

void Broker::close_least_recent_connection(const std::string& except) {
  std::shared_ptr<Connection> oldest;
  for (const auto& w : connections_) {
    auto c = w.lock();
    if (!c || c->listener_name() == except) continue;
    if (!oldest || c->last_activity() < oldest->last_activity()) oldest = c;
  }
  if (!oldest) return;
  RLOG_INFO("closing the least recently active connection of listener %s: the inter-broker listener %s needs a "
            "slot under max.connections", oldest->listener_name().c_str(), except.c_str());
  oldest->close();
}

void Broker::connection_closed(const Connection* c) {
  std::erase_if(connections_, [c](const std::weak_ptr<Connection>& w) {
    auto s = w.lock();
    return !s || s.get() == c;
  });
}

void Broker::start_background_work() {
  if (alter_partitions_) alter_partitions_->start();
  asio::co_spawn(io_, storage_ticks(), asio::detached);
  asio::co_spawn(io_, producer_expiration_checks(), asio::detached);
  groups_->start();
  transactions_->start();
}

awaitable<void> Broker::storage_ticks() {
  asio::steady_timer timer(io_);
  while (!stopping_) {
    // Retention and flushes touch the disk: keep them off the event loop.
    auto ec = co_await run_blocking([this] { return logs_->tick(now_ms()); });
    if (ec) RLOG_WARN("background log work: %s", ec.message().c_str());
    timer.expires_after(std::chrono::seconds(1));
    co_await timer.async_wait(as_tuple_awaitable);
  }
}

// Kafka's PeriodicProducerExpirationCheck: idle idempotent producers are
// forgotten every producer.id.expiration.check.interval.ms. On the event
// loop, which owns the producer state.
awaitable<void> Broker::producer_expiration_checks() {
  asio::steady_timer timer(io_);
  const auto interval = std::chrono::milliseconds(config_.get_int("producer.id.expiration.check.interval.ms"));
  while (!stopping_) {
    timer.expires_after(interval);
    co_await timer.async_wait(as_tuple_awaitable);
    if (stopping_) break;
    const int64_t now = now_ms();
    replica_manager_->for_each_partition([now](const std::shared_ptr<replication::Partition>& p) {
      p->expire_producers(now);
    });
  }
}

void Broker::begin_shutdown(std::function<void()> done) {
  const bool hand_over = member_ && config_.get_bool("controlled.shutdown.enable");
  if (!hand_over) stop_serving();
  asio::co_spawn(io_, shut_down(hand_over, std::move(done)), asio::detached);
}

void Broker::stop_serving() {
  stopping_ = true;
  for (auto& w : connections_)
    if (auto c = w.lock()) c->stop_reading();
  replica_manager_->expire_fetches();  // waiting fetches answer now, so the connections drain
}

awaitable<void> Broker::shut_down(bool hand_over, std::function<void()> done) {
  if (hand_over) {
    // Leadership moves first, while connections are still served: a client
    // producing here is told NOT_LEADER_OR_FOLLOWER and retries on the new
    // leader. Bounded by one session: what the lease would take anyway.
    co_await member_->hand_over_leadership(std::chrono::milliseconds(config_.get_int("broker.session.timeout.ms")));
    stop_serving();
  }
  co_await drain_connections();
  if (fetchers_) fetchers_->shutdown();
  if (member_) co_await member_->leave();
  replica_manager_->snapshot_producers_before_close();
  if (auto ec = logs_->close()) RLOG_ERROR("closing the logs: %s", ec.message().c_str());
  done();
}

awaitable<void> Broker::drain_connections() {
  std::function<bool()> drained = [this] {
    std::erase_if(connections_, [](const std::weak_ptr<Connection>& w) { return w.expired(); });
    return connections_.empty();
  };
  (void)co_await poll_until(std::move(drained), std::chrono::milliseconds(10),
                            std::chrono::milliseconds(config_.get_int("request.timeout.ms")));
  for (auto& w : connections_)
    if (auto c = w.lock()) c->close();
}

}  // namespace runnel::broker
