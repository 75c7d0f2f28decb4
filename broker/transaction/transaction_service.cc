#include "broker/transaction/transaction_service.h"

#include "base/clock.h"
#include "broker/broker.h"
#include "broker/internal_topic_log.h"
#include "broker/logging.h"
#include "protocol/records/batch_builder.h"

namespace runnel::broker::transaction {

namespace {

namespace rec = protocol::records;

CoordinatorConfig coordinator_config(const BrokerConfig& c, int32_t partitions) {
  CoordinatorConfig cc;
  cc.state_partitions = partitions;
  cc.max_timeout_ms = c.get_int("transaction.max.timeout.ms");
  cc.id_expiration_ms = c.get_int("transactional.id.expiration.ms");
  return cc;
}

}  // namespace

TransactionService::TransactionService(Broker& broker) : broker_(broker), created_(broker.io()) {
  created_.expires_at(asio::steady_timer::time_point::max());
  // An existing topic keeps its partition count: ids map to partitions by it.
  auto topic = broker.topics().find(kTransactionStateTopic);
  const int32_t partitions =
      topic ? topic->partition_count : broker.config().get_int("transaction.state.log.num.partitions");
  coordinator_ = std::make_unique<TransactionCoordinator>(broker.io().get_executor(),
                                                          coordinator_config(broker.config(), partitions), *this,
                                                          *this, *this, Clock::system());
}

bool TransactionService::enabled() const { return !broker_.in_cluster(); }

awaitable<bool> TransactionService::state_topic_ready() {
  if (!enabled()) co_return false;
  if (!creating_ && !broker_.topics().find(kTransactionStateTopic)) {
    creating_ = true;
    asio::co_spawn(broker_.io(), create_state_topic(), asio::detached);
  }
  while (creating_) co_await created_.async_wait(as_tuple_awaitable);
  co_return broker_.topics().find(kTransactionStateTopic) != nullptr;
}

// TransactionStateManager.transactionTopicConfigs.
awaitable<void> TransactionService::create_state_topic() {
  const BrokerConfig& c = broker_.config();
  TopicOverrides overrides{{"cleanup.policy", "compact"},
                           {"compression.type", "uncompressed"},
                           // One replica on a single node (config_def.cc).
                           {"min.insync.replicas", "1"},
                           {"segment.bytes", std::to_string(c.get_int("transaction.state.log.segment.bytes"))},
                           {"unclean.leader.election.enable", "false"}};
  const int32_t partitions = coordinator_->config().state_partitions;
  CreatedTopic created;
  try {
    created = co_await broker_.topic_frontend().create(kTransactionStateTopic, partitions, std::move(overrides), 1);
  } catch (const std::exception& e) {
    created.error = {protocol::ErrorCode::unknown_server_error, e.what()};
  }
  if (created.error.ok()) {
    RLOG_INFO("created %s with %d partitions", kTransactionStateTopic, partitions);
    // Nothing to load in a new topic.
    for (int32_t p = 0; p < partitions; ++p) {
      coordinator_->begin_loading(p, 0);
      coordinator_->end_loading(p);
    }
  } else if (created.error.code != protocol::ErrorCode::topic_already_exists) {
    RLOG_WARN("creating %s: %s", kTransactionStateTopic, created.error.message.c_str());
  }
  creating_ = false;
  created_.cancel();
}

void TransactionService::state_topic_deleted() {
  for (int32_t p = 0; p < coordinator_->config().state_partitions; ++p) coordinator_->unload_partition(p);
  RLOG_INFO("%s deleted: every transactional id unloaded", kTransactionStateTopic);
}

void TransactionService::start() {
  if (!enabled()) return;
  if (broker_.topics().find(kTransactionStateTopic)) {
    for (auto& part : broker_.replica_manager().partitions(kTransactionStateTopic))
      coordinator_->begin_loading(part->index(), part->leader_epoch().value());
    asio::co_spawn(broker_.io(), load_partitions(), asio::detached);
  }
  schedule("transaction.abort.timed.out.transaction.cleanup.interval.ms",
           &TransactionCoordinator::abort_timed_out_transactions);
  schedule("transaction.remove.expired.transaction.cleanup.interval.ms",
           &TransactionCoordinator::remove_expired_transactional_ids);
}

void TransactionService::schedule(const char* interval_key,
                                  void (TransactionCoordinator::*task)()) {
  const auto interval = std::chrono::milliseconds(broker_.config().get_int(interval_key));
  asio::co_spawn(
      broker_.io(),
      [](Broker& b, TransactionCoordinator& c, std::chrono::milliseconds every,
         void (TransactionCoordinator::*run)()) -> awaitable<void> {
        asio::steady_timer timer(b.io());
        while (!b.stopping()) {
          timer.expires_after(every);
          co_await timer.async_wait(as_tuple_awaitable);
          if (b.stopping()) break;
          (c.*run)();
        }
      }(broker_, *coordinator_, interval, task),
      asio::detached);
}

awaitable<void> TransactionService::load_partitions() {
  size_t records = 0;
  for (auto& part : broker_.replica_manager().partitions(kTransactionStateTopic))
    records += co_await load_partition(part);
  RLOG_INFO("transaction coordinator loaded %zu records from %s", records, kTransactionStateTopic);
}

awaitable<size_t> TransactionService::load_partition(std::shared_ptr<replication::Partition> part) {
  const int32_t p = part->index();
  KeyedRecords loaded = co_await broker_.run_blocking(read_keyed_records(part->log_ptr()));
  if (!coordinator_->is_loading(p)) co_return 0;
  if (!loaded.error.empty()) RLOG_ERROR("loading %s-%d: %s", kTransactionStateTopic, p, loaded.error.c_str());
  for (auto& r : loaded.records) {
    if (r.marker) continue;  // no transaction writes to this topic
    std::optional<protocol::ByteView> value;
    if (r.value) value = protocol::ByteView(r.value->data(), r.value->size());
    if (!coordinator_->replay(p, protocol::ByteView(r.key.data(), r.key.size()), value))
      RLOG_WARN("%s-%d: skipped a record that is not a transaction's", kTransactionStateTopic, p);
  }
  coordinator_->end_loading(p);
  co_return loaded.records.size();
}

// One record, within request.timeout.ms, as TransactionStateManager appends
// (internal_topic_log.h).
awaitable<ErrorCode> TransactionService::append(int32_t partition, protocol::Bytes key,
                                                std::optional<protocol::Bytes> value) {
  auto topic = broker_.topics().find(kTransactionStateTopic);
  auto part = topic ? broker_.replica_manager().get_partition(kTransactionStateTopic, PartitionId(partition)) : nullptr;
  if (!part) co_return ErrorCode::unknown_topic_or_partition;
  rec::Record r;
  r.key = protocol::ByteView(key.data(), key.size());
  if (value) r.value = protocol::ByteView(value->data(), value->size());
  rec::BatchSpec spec;
  spec.base_timestamp = Clock::system().wall_ms();
  protocol::Bytes batch = rec::build_batch(spec, std::span(&r, 1));
  const auto timeout = std::chrono::milliseconds(broker_.config().get_int("request.timeout.ms"));
  CoordinatorAppend appended = co_await append_coordinator_batch(broker_, std::move(part),
                                                                 topic->config.min_insync_replicas, std::move(batch),
                                                                 timeout);
  co_return appended.error;
}

awaitable<void> TransactionService::send(std::span<MarkerTarget> targets) { co_await write_markers(broker_, targets); }

bool TransactionService::topic_exists(const std::string& topic) const {
  return broker_.topics().find(topic) != nullptr;
}

awaitable<std::optional<int64_t>> TransactionService::next() {
  auto id = co_await broker_.producer_ids().next();
  if (!id) {
    RLOG_ERROR("allocating a producer id: %s", id.error().message().c_str());
    co_return std::nullopt;
  }
  co_return *id;
}

}  // namespace runnel::broker::transaction
