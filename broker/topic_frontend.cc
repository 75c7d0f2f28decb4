#include "broker/topic_frontend.h"

#include <algorithm>
#include <functional>
#include <variant>

#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/transaction/transaction_service.h"
#include "broker/logging.h"
#include "cluster/etcd/key_layout.h"
#include "cluster/partition_change.h"
#include "cluster/replica_placement.h"
#include "cluster/topic_writes.h"
#include "storage/uuid_text.h"

namespace runnel::broker {

using protocol::ErrorCode;

// Holds a name reserved while its disk work runs, released however the
// coroutine leaves (the blocking work may throw); the release wakes the
// changes waiting for the name.
class Reservation {
 public:
  Reservation(TopicTable& table, std::string name, asio::steady_timer& released)
      : table_(table), name_(std::move(name)), released_(released) {
    table_.reserve(name_);
  }
  ~Reservation() {
    table_.release(name_);
    released_.cancel();
  }
  Reservation(const Reservation&) = delete;
  Reservation& operator=(const Reservation&) = delete;

 private:
  TopicTable& table_;
  std::string name_;
  asio::steady_timer& released_;
};

namespace {

std::vector<int32_t> range(int32_t from, int32_t to) {
  std::vector<int32_t> out;
  for (int32_t p = from; p < to; ++p) out.push_back(p);
  return out;
}

// The blocking work, built outside the coroutines: GCC 12 miscompiles a
// lambda with captures written inside a co_await expression.
std::function<OpenedPartitions()> creating(storage::LogManager& logs, PartitionSpec spec, int32_t from, int32_t to) {
  return [logs = &logs, spec = std::move(spec), from, to] { return create_partitions(*logs, spec, from, to); };
}

TopicError already_exists(const std::string& name) {
  return {ErrorCode::topic_already_exists, "Topic '" + name + "' already exists."};
}

}  // namespace

TopicError check_replica_list(const std::vector<int32_t>& replicas, const cluster::MetadataImage& image) {
  if (replicas.empty())
    return {ErrorCode::invalid_replica_assignment, "The manual partition assignment includes an empty replica list."};
  std::vector<int32_t> sorted = replicas;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (!image.broker(NodeId(sorted[i])))
      return {ErrorCode::invalid_replica_assignment, "The manual partition assignment includes broker " +
                                                         std::to_string(sorted[i]) + ", but no such broker is registered."};
    if (i > 0 && sorted[i] == sorted[i - 1])
      return {ErrorCode::invalid_replica_assignment, "The manual partition assignment includes the broker " +
                                                         std::to_string(sorted[i]) + " more than once."};
  }
  return {};
}

TopicFrontend::TopicFrontend(Broker& broker) : broker_(broker), released_(broker.io()) {
  released_.expires_at(asio::steady_timer::time_point::max());
}

TopicTable& TopicFrontend::table() { return broker_.topics(); }

bool TopicFrontend::in_flight(const std::string& name) const { return broker_.topics().reserved(name); }

TopicError TopicFrontend::validate_new_topic(const std::string& name, int32_t& partitions, int16_t& replication_factor,
                                             const TopicOverrides& overrides) const {
  const BrokerConfig& config = broker_.config();
  if (auto e = TopicTable::validate_name(name); !e.ok()) return e;
  if (broker_.topics().find(name) || broker_.metadata_cache()->topic(name) || in_flight(name))
    return already_exists(name);
  if (partitions == -1) partitions = config.typed().num_partitions;
  if (partitions <= 0)
    return {ErrorCode::invalid_partitions, "Number of partitions was set to an invalid non-positive value."};
  if (replication_factor == -1) replication_factor = static_cast<int16_t>(config.typed().default_replication_factor);
  // The placement's own checks, over the live brokers (on one node, this one).
  if (auto placed = cluster::place_replicas(cluster::live_racked_brokers(*broker_.metadata_cache()), 0, 0,
                                            replication_factor);
      placed.error)
    return {ErrorCode::invalid_replication_factor, placed.error->message};
  for (const auto& [k, v] : overrides)
    if (auto err = validate_topic_config(k, v); !err.empty()) return {ErrorCode::invalid_config, err};
  return {};
}

awaitable<CreatedTopic> TopicFrontend::create(std::string name, int32_t partitions, TopicOverrides overrides,
                                              int16_t replication_factor, ReplicaAssignment assignment) {
  if (broker_.in_cluster())
    co_return co_await create_in_cluster(std::move(name), partitions, std::move(overrides), replication_factor,
                                         std::move(assignment));
  TopicTable& t = table();
  // Another request created this name, or is creating it, since this one
  // was validated: Kafka's controller, one request at a time, would say so.
  if (t.find(name) || t.reserved(name)) co_return CreatedTopic{already_exists(name), nullptr};
  auto topic = t.new_topic(name, overrides, false);
  {
    Reservation reserved(t, name, released_);
    auto opened = co_await broker_.run_blocking(creating(broker_.logs(), t.partition_spec(*topic), 0, partitions));
    if (opened.error) co_return CreatedTopic{{ErrorCode::kafka_storage_error, opened.error.message()}, nullptr};
    topic->partition_count = partitions;
    for (auto& p : opened.partitions) broker_.replica_manager().add_partition(std::move(p));
    t.publish(topic);
  }
  if (auto ec = co_await persist(*topic)) {
    RLOG_ERROR("storing topic %s after creating it: %s", name.c_str(), ec.message().c_str());
    co_return CreatedTopic{{ErrorCode::kafka_storage_error, ec.message()}, nullptr};
  }
  RLOG_INFO("created topic %s with %d partition(s), id %s", name.c_str(), partitions,
            storage::uuid_to_base64(topic->id).c_str());
  co_return CreatedTopic{{}, topic};
}

awaitable<TopicError> TopicFrontend::remove(std::string name) {
  if (broker_.in_cluster()) co_return co_await remove_in_cluster(std::move(name));
  co_await wait_for(name);
  TopicTable& t = table();
  auto topic = t.find(name);
  if (!topic) co_return TopicError{ErrorCode::unknown_topic_or_partition, "This server does not host this topic-partition."};
  t.unpublish(*topic);
  if (name == group::kOffsetsTopic) broker_.groups().offsets_topic_deleted();
  if (name == transaction::kTransactionStateTopic) broker_.transactions().state_topic_deleted();
  std::vector<std::shared_ptr<Partition>> removed = broker_.replica_manager().remove_topic(name);
  {
    Reservation reserved(t, name, released_);
    co_await remove_logs(name, range(0, topic->partition_count));
  }
  // After the logs closed: fetches waiting on them see the topic gone.
  for (auto& p : removed) p->fetch_watchers().check_and_complete();
  if (auto ec = co_await unpersist(name)) co_return TopicError{ErrorCode::kafka_storage_error, ec.message()};
  RLOG_INFO("deleted topic %s", name.c_str());
  co_return TopicError{};
}

TopicError TopicFrontend::check_new_count(const Topic& topic, int32_t count) {
  return check_new_count(topic.partition_count, topic.name, count);
}

TopicError TopicFrontend::check_new_count(int32_t current, const std::string& name, int32_t count) {
  if (count == current)
    return {ErrorCode::invalid_partitions, "Topic already has " + std::to_string(current) + " partition(s)."};
  if (count < current)
    return {ErrorCode::invalid_partitions, "The topic " + name + " currently has " + std::to_string(current) +
                                               " partition(s); " + std::to_string(count) + " would not be an increase."};
  return {};
}

awaitable<TopicError> TopicFrontend::add_partitions(std::string name, int32_t count, ReplicaAssignment assignment) {
  if (broker_.in_cluster()) co_return co_await add_partitions_in_cluster(std::move(name), count, std::move(assignment));
  co_await wait_for(name);
  TopicTable& t = table();
  auto topic = t.find(name);
  if (!topic) co_return TopicError{ErrorCode::unknown_topic_or_partition, ""};
  if (auto e = check_new_count(*topic, count); !e.ok()) co_return e;
  const int32_t current = topic->partition_count;
  {
    Reservation reserved(t, name, released_);
    auto opened = co_await broker_.run_blocking(creating(broker_.logs(), t.partition_spec(*topic), current, count));
    if (opened.error) co_return TopicError{ErrorCode::kafka_storage_error, opened.error.message()};
    for (auto& p : opened.partitions) broker_.replica_manager().add_partition(std::move(p));
    // The overrides may have changed while the logs were being made:
    // grow gives the new partitions the topic's config as it is now.
    t.grow(*topic, count);
  }
  if (auto ec = co_await persist(*topic)) co_return TopicError{ErrorCode::kafka_storage_error, ec.message()};
  RLOG_INFO("topic %s grown to %d partitions", name.c_str(), count);
  co_return TopicError{};
}

awaitable<TopicError> TopicFrontend::set_overrides(std::string name, TopicOverrides overrides) {
  if (broker_.in_cluster()) co_return co_await set_overrides_in_cluster(std::move(name), std::move(overrides));
  TopicTable& t = table();
  auto topic = t.find(name);
  if (!topic)
    co_return TopicError{ErrorCode::unknown_topic_or_partition, "This server does not host this topic-partition."};
  t.set_overrides(*topic, std::move(overrides));
  if (auto ec = co_await persist(*topic)) co_return TopicError{ErrorCode::kafka_storage_error, ec.message()};
  co_return TopicError{};
}

awaitable<void> TopicFrontend::wait_for(const std::string& name) {
  // Bounded by the change in flight, which holds the name only for its
  // disk work; its release cancels the wait.
  while (table().reserved(name)) co_await released_.async_wait(as_tuple_awaitable);
}

awaitable<std::error_code> TopicFrontend::persist(const Topic& topic) {
  auto r = co_await broker_.metadata().put(cluster::keys::topic(topic.name), TopicTable::record(topic));
  co_return r ? std::error_code() : r.error();
}

awaitable<std::error_code> TopicFrontend::unpersist(std::string name) {
  auto r = co_await broker_.metadata().erase(cluster::keys::topic(name));
  co_return r ? std::error_code() : r.error();
}

awaitable<void> TopicFrontend::remove_logs(const std::string& topic, std::vector<int32_t> indexes) {
  (void)co_await broker_.run_blocking(removing_partition_logs(broker_.logs(), topic, std::move(indexes)));
}

namespace {

TopicError unknown_topic() {
  return {ErrorCode::unknown_topic_or_partition, "This server does not host this topic-partition."};
}

TopicError store_failed(const std::error_code& ec) {
  return {ErrorCode::request_timed_out, "The cluster's metadata could not be written: " + ec.message()};
}

// The seed's placement over the live brokers, or the request's own.
std::variant<std::vector<std::vector<NodeId>>, TopicError> replicas_for(const cluster::MetadataImage& image,
                                                                      int32_t first, int32_t count, int16_t factor,
                                                                      ReplicaAssignment assignment) {
  if (!assignment.empty()) return assignment;
  auto placed = cluster::place_replicas(cluster::live_racked_brokers(image), first, count, factor);
  if (placed.error) return TopicError{ErrorCode::invalid_replication_factor, placed.error->message};
  return std::move(placed.replicas);
}

}  // namespace

awaitable<CreatedTopic> TopicFrontend::create_in_cluster(std::string name, int32_t partitions, TopicOverrides overrides,
                                                         int16_t replication_factor, ReplicaAssignment assignment) {
  const cluster::ImagePtr image = broker_.metadata_cache().image();
  if (image->topic(name)) co_return CreatedTopic{already_exists(name), nullptr};
  if (replication_factor == -1) replication_factor = static_cast<int16_t>(broker_.config().typed().default_replication_factor);
  auto replicas = replicas_for(*image, 0, partitions, replication_factor, std::move(assignment));
  if (auto* e = std::get_if<TopicError>(&replicas)) co_return CreatedTopic{*e, nullptr};
  cluster::TopicImage topic;
  topic.name = name;
  do {
    topic.id = storage::random_uuid();
  } while (image->topic(topic.id));
  topic.internal = TopicTable::is_internal(name);
  topic.configs = cluster::TopicConfigs(overrides.begin(), overrides.end());
  for (auto& r : std::get<0>(replicas)) topic.partitions.push_back(cluster::new_partition(std::move(r)));
  auto committed = co_await broker_.metadata().commit(cluster::create_topic_txn(topic));
  if (!committed) co_return CreatedTopic{store_failed(committed.error()), nullptr};
  // Another broker created the name first: Kafka's controller, one request
  // at a time, would say the same.
  if (!committed->succeeded) co_return CreatedTopic{already_exists(name), nullptr};
  const auto limit = std::chrono::milliseconds(broker_.config().get_int("request.timeout.ms"));
  if (!co_await broker_.wait_for_image(committed->revision, limit))
    co_return CreatedTopic{{ErrorCode::request_timed_out, "The topic was created but this broker has not seen it yet."},
                           nullptr};
  auto created = table().find(name);
  if (!created || created->id != topic.id) co_return CreatedTopic{already_exists(name), nullptr};
  RLOG_INFO("created topic %s with %d partition(s), replication factor %zu, id %s", name.c_str(), partitions,
            topic.partitions.empty() ? size_t{0} : topic.partitions.front().replicas.size(),
            storage::uuid_to_base64(topic.id).c_str());
  co_return CreatedTopic{{}, created};
}

namespace {

// The transactions' builders, made outside the coroutines: GCC 12
// miscompiles a lambda with captures written inside a co_await expression.
using BuildTxn = std::function<std::variant<cluster::Txn, TopicError>(const cluster::MetadataImage&)>;

BuildTxn deleting_topic(std::string name) {
  return [name = std::move(name)](const cluster::MetadataImage& image) -> std::variant<cluster::Txn, TopicError> {
    auto topic = image.topic(name);
    if (!topic) return unknown_topic();
    return cluster::delete_topic_txn(*topic);
  };
}

BuildTxn growing_topic(std::string name, int32_t count, ReplicaAssignment assignment) {
  return [name = std::move(name), count, assignment = std::move(assignment)](
             const cluster::MetadataImage& image) -> std::variant<cluster::Txn, TopicError> {
    auto topic = image.topic(name);
    if (!topic) return unknown_topic();
    const auto current = static_cast<int32_t>(topic->partitions.size());
    if (auto e = TopicFrontend::check_new_count(current, name, count); !e.ok()) return e;
    const auto factor = static_cast<int16_t>(topic->partitions.empty() ? 1 : topic->partitions.front().replicas.size());
    auto replicas = replicas_for(image, current, count - current, factor, assignment);
    if (auto* e = std::get_if<TopicError>(&replicas)) return *e;
    std::vector<cluster::PartitionRegistration> added;
    for (auto& r : std::get<0>(replicas)) added.push_back(cluster::new_partition(std::move(r)));
    return cluster::add_partitions_txn(*topic, added);
  };
}

BuildTxn configuring_topic(std::string name, cluster::TopicConfigs configs) {
  return [name = std::move(name), configs = std::move(configs)](
             const cluster::MetadataImage& image) -> std::variant<cluster::Txn, TopicError> {
    auto topic = image.topic(name);
    if (!topic) return unknown_topic();
    return cluster::set_topic_configs_txn(*topic, configs);
  };
}

}  // namespace

awaitable<TopicError> TopicFrontend::remove_in_cluster(std::string name) {
  BuildTxn build = deleting_topic(std::move(name));
  co_return co_await commit_and_wait(std::move(build));
}

awaitable<TopicError> TopicFrontend::add_partitions_in_cluster(std::string name, int32_t count,
                                                               ReplicaAssignment assignment) {
  BuildTxn build = growing_topic(std::move(name), count, std::move(assignment));
  co_return co_await commit_and_wait(std::move(build));
}

awaitable<TopicError> TopicFrontend::set_overrides_in_cluster(std::string name, TopicOverrides overrides) {
  BuildTxn build = configuring_topic(std::move(name), cluster::TopicConfigs(overrides.begin(), overrides.end()));
  co_return co_await commit_and_wait(std::move(build));
}

awaitable<TopicError> TopicFrontend::commit_and_wait(std::function<TxnOrError(const cluster::MetadataImage&)> build) {
  const auto limit = std::chrono::milliseconds(broker_.config().get_int("request.timeout.ms"));
  // Each attempt is built from the image as it stands; a conflict means
  // another broker changed the topic first (Kafka's controller would have
  // serialized the two): once the image has that change, build again.
  for (int attempt = 0;; ++attempt) {
    auto built = build(*broker_.metadata_cache().image());
    if (auto* e = std::get_if<TopicError>(&built)) co_return *e;
    auto committed = co_await broker_.metadata().commit(std::get<cluster::Txn>(std::move(built)));
    if (!committed) co_return store_failed(committed.error());
    if (!co_await broker_.wait_for_image(committed->revision, limit))
      co_return TopicError{ErrorCode::request_timed_out, "This broker has not seen the cluster's metadata change yet."};
    if (committed->succeeded) co_return TopicError{};
    if (attempt == 10) co_return TopicError{ErrorCode::request_timed_out, "The topic kept changing concurrently."};
  }
}

}  // namespace runnel::broker
