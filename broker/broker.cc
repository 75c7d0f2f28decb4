#include "broker/broker.h"

#include <algorithm>

#include "broker/connection.h"
#include "broker/group/group_service.h"
#include "broker/logging.h"
#include "storage/meta_properties.h"
#include "storage/uuid_text.h"

namespace runnel::broker {

namespace {

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

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
      producer_ids_(std::filesystem::path(config_.log_dirs().front()) / "runnel-producer-ids") {
  for (const auto& d : config_.log_dirs()) std::filesystem::create_directories(d);
  load_dynamic_configs(config_);
  logs_ = open_logs(config_, cluster_id_, TopicTable::log_config(config_, {}));
  topics_ = std::make_unique<TopicTable>(config_, *logs_);
  if (auto ec = topics_->load()) throw std::runtime_error("cannot load topics: " + ec.message());
  replica_manager_ = std::make_unique<replication::ReplicaManager>(io.get_executor(), *topics_, NodeId(node_id_));
  // Kafka's stray logs: partition directories runnel-topics.json does not
  // claim (a creation that failed halfway, a crash mid-delete).
  for (const auto& d : logs_->set_aside_strays()) RLOG_WARN("stray log %s: %s", d.path.c_str(), d.reason.c_str());
  if (auto ec = producer_ids_.load()) throw std::runtime_error("cannot read runnel-producer-ids: " + ec.message());
  groups_ = std::make_unique<group::GroupService>(*this);
}

Broker::~Broker() { blocking_.join(); }

TopicError Broker::set_dynamic_configs(ConfigLayer layer, DynamicConfigs configs) {
  config_.set_dynamic_configs(layer, std::move(configs));
  topics_->apply_broker_defaults();
  if (auto ec = save_dynamic_configs(config_)) return {protocol::ErrorCode::kafka_storage_error, ec.message()};
  RLOG_INFO("dynamic broker configs (%s) now: %zu set",
            layer == ConfigLayer::dynamic_default ? "cluster default" : "this broker",
            config_.dynamic_configs(layer).size());
  return {};
}

const Listener& Broker::advertised_listener(const std::string& listener_name) const {
  for (const auto& l : advertised_)
    if (l.name == listener_name) return l;
  return advertised_.front();
}

void Broker::set_bound_port(const std::string& listener_name, uint16_t port) {
  for (auto& l : advertised_)
    if (l.name == listener_name && l.port == 0) l.port = port;
}

void Broker::connection_opened(const std::shared_ptr<Connection>& c) { connections_.push_back(c); }

void Broker::connection_closed(const Connection* c) {
  std::erase_if(connections_, [c](const std::weak_ptr<Connection>& w) {
    auto s = w.lock();
    return !s || s.get() == c;
  });
}

void Broker::start_background_work() {
  asio::co_spawn(io_, storage_ticks(), asio::detached);
  asio::co_spawn(io_, producer_expiration_checks(), asio::detached);
  groups_->start();
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
    for (const auto& [_, topic] : topics_->topics())
      for (const auto& part : topic->partitions) part->expire_producers(now);
  }
}

void Broker::begin_shutdown(std::function<void()> done) {
  stopping_ = true;
  for (auto& w : connections_)
    if (auto c = w.lock()) c->stop_reading();
  replica_manager_->expire_fetches();  // waiting fetches answer now, so the connections drain
  asio::co_spawn(io_, drain_connections(std::move(done)), asio::detached);
}

awaitable<void> Broker::drain_connections(std::function<void()> done) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.get_int("request.timeout.ms"));
  asio::steady_timer timer(io_);
  for (;;) {
    std::erase_if(connections_, [](const std::weak_ptr<Connection>& w) { return w.expired(); });
    if (connections_.empty() || std::chrono::steady_clock::now() >= deadline) break;
    timer.expires_after(std::chrono::milliseconds(10));
    co_await timer.async_wait(as_tuple_awaitable);
  }
  for (auto& w : connections_)
    if (auto c = w.lock()) c->close();
  replica_manager_->snapshot_producers_before_close();
  if (auto ec = logs_->close()) RLOG_ERROR("closing the logs: %s", ec.message().c_str());
  done();
}

}  // namespace runnel::broker
