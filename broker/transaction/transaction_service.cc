#include "broker/transaction/transaction_service.h"

#include <algorithm>

#include "base/clock.h"
#include "broker/broker.h"
#include "broker/internal_topic_log.h"
#include "broker/logging.h"
#include "broker/transaction/transaction_log_format.h"
#include "protocol/messages/27_write_txn_markers.h"
#include "protocol/records/batch_builder.h"

namespace runnel::broker::transaction {

namespace {

namespace rec = protocol::records;

CoordinatorConfig coordinator_config(const BrokerConfig& c, int32_t partitions) {
  CoordinatorConfig cc;
  cc.state_partitions = partitions;
  cc.max_timeout_ms = c.get_int("transaction.max.timeout.ms");
  cc.id_expiration_ms = c.get_int("transactional.id.expiration.ms");
  cc.level = kFinalizedTransactionVersion;
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

awaitable<bool> TransactionService::state_topic_ready() {
  if (!creating_ && !broker_.topics().find(kTransactionStateTopic)) {
    const int32_t factor =
        broker_.in_cluster() ? broker_.config().get_int("transaction.state.log.replication.factor") : 1;
    const size_t live = broker_.metadata_cache()->live_brokers().size();
    if (live < static_cast<size_t>(factor)) {
      RLOG_DEBUG("%s not created: %zu live broker(s), transaction.state.log.replication.factor is %d",
                 kTransactionStateTopic, live, factor);
      co_return false;
    }
    creating_ = true;
    asio::co_spawn(broker_.io(), create_state_topic(static_cast<int16_t>(factor)), asio::detached);
  }
  while (creating_) co_await created_.async_wait(as_tuple_awaitable);
  co_return broker_.topics().find(kTransactionStateTopic) != nullptr;
}

// TransactionStateManager.transactionTopicConfigs.
awaitable<void> TransactionService::create_state_topic(int16_t replication_factor) {
  const BrokerConfig& c = broker_.config();
  // A single node's one replica is its whole ISR (config_def.cc).
  const int32_t min_isr = broker_.in_cluster() ? c.get_int("transaction.state.log.min.isr") : 1;
  TopicOverrides overrides{{"cleanup.policy", "compact"},
                           {"compression.type", "uncompressed"},
                           {"min.insync.replicas", std::to_string(min_isr)},
                           {"segment.bytes", std::to_string(c.get_int("transaction.state.log.segment.bytes"))},
                           {"unclean.leader.election.enable", "false"}};
  const int32_t partitions = coordinator_->config().state_partitions;
  CreatedTopic created;
  try {
    created = co_await broker_.topic_frontend().create(kTransactionStateTopic, partitions, std::move(overrides),
                                                       replication_factor);
  } catch (const std::exception& e) {
    created.error = {protocol::ErrorCode::unknown_server_error, e.what()};
  }
  if (created.error.ok()) {
    RLOG_INFO("created %s with %d partitions, replication factor %d", kTransactionStateTopic, partitions,
              replication_factor);
    // Nothing to load in a new topic; a cluster's leaders own theirs as
    // their image elects them.
    if (!broker_.in_cluster())
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

void TransactionService::leadership_changed(int32_t partition, bool leader, int32_t leader_epoch) {
  const std::optional<int32_t> owned_at = coordinator_->coordinator_epoch(partition);
  if (!leader) {
    if (!owned_at) return;
    ++load_generation_[partition];
    coordinator_->unload_partition(partition);
    RLOG_INFO("%s-%d: resigned as its transaction coordinator", kTransactionStateTopic, partition);
    return;
  }
  if (owned_at == leader_epoch) return;
  auto part = broker_.replica_manager().get_partition(kTransactionStateTopic, PartitionId(partition));
  auto topic = broker_.topics().find(kTransactionStateTopic);
  if (!part || !topic) return;
  // The mapping of ids to partitions is the topic's.
  coordinator_->set_state_partitions(topic->partition_count);
  const uint64_t generation = ++load_generation_[partition];
  coordinator_->begin_loading(partition, leader_epoch);
  RLOG_INFO("%s-%d: elected its transaction coordinator at epoch %d, loading", kTransactionStateTopic, partition,
            leader_epoch);
  asio::co_spawn(broker_.io(), load_partition(std::move(part), generation), asio::detached);
}

std::optional<NodeId> TransactionService::coordinator_node(const std::string& transactional_id) const {
  if (!broker_.in_cluster()) return NodeId(broker_.node_id());
  const cluster::MetadataImage& image = *broker_.metadata_cache();
  auto topic = image.topic(kTransactionStateTopic);
  if (!topic || topic->partitions.empty()) return std::nullopt;
  const int32_t p = transaction_partition_for(transactional_id, static_cast<int32_t>(topic->partitions.size()));
  const cluster::PartitionRegistration* reg = topic->partition(PartitionId(p));
  if (!reg || !reg->has_leader()) return std::nullopt;
  const cluster::BrokerRegistration* leader = image.broker(reg->leader);
  if (!leader || leader->fenced) return std::nullopt;
  return reg->leader;
}

void TransactionService::state_topic_deleted() {
  for (int32_t p = 0; p < coordinator_->config().state_partitions; ++p) coordinator_->unload_partition(p);
  RLOG_INFO("%s deleted: every transactional id unloaded", kTransactionStateTopic);
}

void TransactionService::start() {
  // A cluster's partitions are loaded as their leadership arrives.
  if (!broker_.in_cluster() && broker_.topics().find(kTransactionStateTopic)) {
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
    records += co_await load_partition(part, load_generation_[part->index()]);
  RLOG_INFO("transaction coordinator loaded %zu records from %s", records, kTransactionStateTopic);
}

awaitable<size_t> TransactionService::load_partition(std::shared_ptr<replication::Partition> part,
                                                     uint64_t generation) {
  const int32_t p = part->index();
  KeyedRecords loaded = co_await broker_.run_blocking(read_keyed_records(part->log_ptr()));
  if (load_generation_[p] != generation || !coordinator_->is_loading(p)) co_return 0;
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
                                                std::optional<protocol::Bytes> value, bool sync) {
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
                                                                 timeout, sync);
  co_return appended.error;
}

// Kafka's TransactionMarkerChannelManager: each partition's marker goes to
// its leader as the image names it, this broker's own partitions appended
// in place, every other leader's in one WriteTxnMarkers sent alongside. A
// partition without a leader, or a leader that cannot be reached, answers
// an error the coordinator retries after its backoff, when the image may
// name another leader.
awaitable<void> TransactionService::send(std::span<MarkerTarget> targets) {
  if (!broker_.in_cluster()) co_return co_await write_markers(broker_, targets);
  const NodeId self(broker_.node_id());
  std::vector<MarkerTarget> local;
  std::vector<MarkerTarget*> local_of;
  std::map<NodeId, std::vector<MarkerTarget*>> remote;
  for (MarkerTarget& t : targets) {
    if (t.error != ErrorCode::none) continue;
    const cluster::PartitionRegistration* reg = broker_.metadata_cache()->partition(t.topic, PartitionId(t.partition));
    if (!reg) t.error = ErrorCode::unknown_topic_or_partition;
    else if (!reg->has_leader()) t.error = ErrorCode::not_leader_or_follower;
    else if (reg->leader == self) {
      local.push_back(t);
      local_of.push_back(&t);
    } else {
      remote[reg->leader].push_back(&t);
    }
  }
  // The remote sends run beside the local append; this waits for all of
  // them (each bounded by the channel's timeout).
  struct Outstanding {
    explicit Outstanding(asio::any_io_executor ex) : done(ex, asio::steady_timer::time_point::max()) {}
    asio::steady_timer done;
    size_t left = 0;
  };
  auto outstanding = std::make_shared<Outstanding>(broker_.io().get_executor());
  outstanding->left = remote.size();
  for (auto& [node, to] : remote)
    asio::co_spawn(broker_.io(), send_to(node, std::move(to)), [outstanding](std::exception_ptr) {
      if (--outstanding->left == 0) outstanding->done.cancel();
    });
  if (!local.empty()) {
    co_await write_markers(broker_, local);
    for (size_t i = 0; i < local.size(); ++i) local_of[i]->error = local[i].error;
  }
  while (outstanding->left > 0) co_await outstanding->done.async_wait(as_tuple_awaitable);
}

awaitable<void> TransactionService::send_to(NodeId node, std::vector<MarkerTarget*> targets) {
  // One WritableTxnMarker per transaction end, its partitions by topic.
  protocol::WriteTxnMarkersRequest req;
  std::vector<const TxnMarker*> markers;
  bool versioned = false;
  for (MarkerTarget* t : targets) {
    auto at = std::find(markers.begin(), markers.end(), t->marker);
    if (at == markers.end()) {
      markers.push_back(t->marker);
      auto& m = req.markers.emplace_back();
      m.producer_id = t->marker->producer_id;
      m.producer_epoch = t->marker->producer_epoch;
      m.transaction_result = t->marker->commit;
      m.coordinator_epoch = t->marker->coordinator_epoch;
      m.transaction_version = t->marker->transaction_version;
      versioned = versioned || t->marker->transaction_version != 0;
      at = markers.end() - 1;
    }
    auto& m = req.markers[static_cast<size_t>(at - markers.begin())];
    if (m.topics.empty() || m.topics.back().name != t->topic) m.topics.emplace_back().name = t->topic;
    m.topics.back().partition_indexes.push_back(t->partition);
  }
  // v2 carries each marker's transaction version (KIP-1228); v1 means 0.
  auto response = co_await broker_.inter_broker()->send<protocol::WriteTxnMarkersApi>(node, req, versioned ? 2 : 1);
  if (!response) {
    RLOG_DEBUG("WriteTxnMarkers to broker %d failed: %s", node.value(), response.error().message().c_str());
    for (MarkerTarget* t : targets) t->error = ErrorCode::network_exception;
    co_return;
  }
  // An answer that leaves a partition out counts as failed for it.
  for (MarkerTarget* t : targets) t->error = ErrorCode::unknown_server_error;
  for (const auto& m : response->markers)
    for (const auto& topic : m.topics)
      for (const auto& pr : topic.partitions)
        for (MarkerTarget* t : targets)
          if (t->marker->producer_id == m.producer_id && t->topic == topic.name && t->partition == pr.partition_index)
            t->error = static_cast<ErrorCode>(pr.error_code);
}

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
