#include "broker/group/group_service.h"

#include "base/clock.h"
#include "broker/broker.h"
#include "broker/internal_topic_log.h"
#include "broker/logging.h"
#include "protocol/records/batch_builder.h"
#include "protocol/records/batch_reader.h"
#include "protocol/records/validate.h"
#include "storage/io.h"

namespace runnel::broker::group {

namespace {

namespace rec = protocol::records;

int64_t wall_ms() { return runnel::Clock::system().wall_ms(); }

CoordinatorConfig coordinator_config(const BrokerConfig& c, int32_t partitions) {
  CoordinatorConfig cc;
  cc.offsets_partitions = partitions;
  cc.initial_rebalance_delay_ms = c.get_int("group.initial.rebalance.delay.ms");
  cc.min_session_timeout_ms = c.get_int("group.min.session.timeout.ms");
  cc.max_session_timeout_ms = c.get_int("group.max.session.timeout.ms");
  cc.max_size = c.get_int("group.max.size");
  cc.offset_metadata_max_bytes = c.get_int("offset.metadata.max.bytes");
  cc.offsets_retention_ms = static_cast<int64_t>(c.get_int("offsets.retention.minutes")) * 60 * 1000;
  cc.consumer.session_timeout_ms = c.get_int("group.consumer.session.timeout.ms");
  cc.consumer.heartbeat_interval_ms = c.get_int("group.consumer.heartbeat.interval.ms");
  cc.consumer.max_size = c.get_int("group.consumer.max.size");
  cc.consumer.assignors = c.get_list("group.consumer.assignors");
  return cc;
}

}  // namespace

GroupService::GroupService(Broker& broker)
    : broker_(broker), topics_image_(broker.metadata_cache()), offsets_topic_done_(broker.io()) {
  offsets_topic_done_.expires_at(asio::steady_timer::time_point::max());
  // An existing topic keeps the partition count it was created with (the
  // group -> partition mapping depends on it); a new one gets the config's.
  auto topic = broker.topics().find(kOffsetsTopic);
  auto partitions = topic ? topic->partition_count : broker.config().get_int("offsets.topic.num.partitions");
  timer_ = std::make_unique<PurgatoryTimer>(broker.io().get_executor(), Clock::system(),
                                            [&broker] { return broker.stopping(); });
  coordinator_ =
      std::make_unique<GroupCoordinator>(coordinator_config(broker.config(), partitions), *this, Clock::system(), *timer_,
                                         topics_image_);
  // In a cluster the partitions this broker leads are owned and loaded as
  // its image says (leadership_changed); nothing before.
  if (broker.in_cluster()) {
    coordinator_->coordinate_owned_only();
    return;
  }
  if (topic)
    for (int32_t p = 0; p < partitions; ++p) coordinator_->begin_loading(p);
}

void GroupService::request_offsets_topic() {
  if (creating_offsets_topic_ || broker_.metadata_cache()->topic(kOffsetsTopic)) return;
  const int32_t factor = broker_.in_cluster() ? broker_.config().get_int("offsets.topic.replication.factor") : 1;
  const size_t live = broker_.metadata_cache()->live_brokers().size();
  if (live < static_cast<size_t>(factor)) {
    RLOG_DEBUG("%s not created: %zu live broker(s), offsets.topic.replication.factor is %d", kOffsetsTopic, live,
               factor);
    return;
  }
  creating_offsets_topic_ = true;
  asio::co_spawn(broker_.io(), create_offsets_topic(static_cast<int16_t>(factor)), asio::detached);
}

awaitable<bool> GroupService::offsets_topic_ready() {
  request_offsets_topic();
  // Bounded by the creation in flight, which cancels the timer as it ends.
  while (creating_offsets_topic_) co_await offsets_topic_done_.async_wait(as_tuple_awaitable);
  co_return broker_.topics().find(kOffsetsTopic) != nullptr;
}

// The partition count is the coordinator's, which maps groups to
// partitions: a topic deleted and created again keeps it.
awaitable<void> GroupService::create_offsets_topic(int16_t replication_factor) {
  TopicOverrides overrides{{"cleanup.policy", "compact"},
                           {"segment.bytes", std::to_string(broker_.config().get_int("offsets.topic.segment.bytes"))},
                           {"compression.type", "producer"}};
  const int32_t partitions = coordinator_->config().offsets_partitions;
  CreatedTopic created;
  try {
    created = co_await broker_.topic_frontend().create(kOffsetsTopic, partitions, std::move(overrides),
                                                       replication_factor);
  } catch (const std::exception& e) {
    created.error = {protocol::ErrorCode::unknown_server_error, e.what()};
  }
  creating_offsets_topic_ = false;
  offsets_topic_done_.cancel();
  if (created.error.ok())
    RLOG_INFO("created %s with %d partitions, replication factor %d", kOffsetsTopic, partitions, replication_factor);
  else if (created.error.code != protocol::ErrorCode::topic_already_exists)
    RLOG_WARN("creating %s: %s", kOffsetsTopic, created.error.message.c_str());
}

void GroupService::offsets_topic_deleted() {
  for (auto& [p, generation] : load_generation_) ++generation;
  coordinator_->unload_all();
  RLOG_INFO("%s deleted: every group and its offsets unloaded", kOffsetsTopic);
}

void GroupService::start() {
  if (!broker_.in_cluster() && broker_.topics().find(kOffsetsTopic)) asio::co_spawn(broker_.io(), load_partitions(), asio::detached);
  schedule_offsets_expiration();
}

awaitable<void> GroupService::load_partitions() {
  size_t records = 0;
  for (auto& part : broker_.replica_manager().partitions(kOffsetsTopic)) records += co_await load_partition(part, 0);
  RLOG_INFO("group coordinator loaded %zu records from %s", records, kOffsetsTopic);
}

awaitable<size_t> GroupService::load_partition(std::shared_ptr<replication::Partition> part, uint64_t generation) {
  const int32_t p = part->index();
  KeyedRecords loaded = co_await broker_.run_blocking(read_keyed_records(part->log_ptr()));
  if (load_generation_[p] != generation || !coordinator_->is_loading(p)) co_return 0;
  if (!loaded.error.empty()) RLOG_ERROR("loading %s-%d: %s", kOffsetsTopic, part->index(), loaded.error.c_str());
  for (auto& r : loaded.records) {
    if (r.marker) {
      coordinator_->replay_marker(p, r.producer_id, *r.marker);
      continue;
    }
    std::optional<ByteView> value;
    if (r.value) value = ByteView(r.value->data(), r.value->size());
    coordinator_->replay(p, ByteView(r.key.data(), r.key.size()), value, r.offset, r.producer_id);
  }
  coordinator_->end_loading(part->index());
  co_return loaded.records.size();
}

void GroupService::leadership_changed(int32_t partition, bool leader) {
  if (!leader) {
    if (!coordinator_->owns(partition)) return;
    ++load_generation_[partition];
    coordinator_->unload_partition(partition);
    RLOG_INFO("%s-%d: resigned as its group coordinator", kOffsetsTopic, partition);
    return;
  }
  if (coordinator_->owns(partition)) return;
  auto part = broker_.replica_manager().get_partition(kOffsetsTopic, PartitionId(partition));
  auto topic = broker_.topics().find(kOffsetsTopic);
  if (!part || !topic) return;
  // The mapping of groups to partitions is the topic's.
  coordinator_->set_offsets_partitions(topic->partition_count);
  const uint64_t generation = ++load_generation_[partition];
  coordinator_->own(partition);
  coordinator_->begin_loading(partition);
  RLOG_INFO("%s-%d: elected its group coordinator, loading", kOffsetsTopic, partition);
  asio::co_spawn(broker_.io(), load_partition(std::move(part), generation), asio::detached);
}

void GroupService::schedule_offsets_expiration() {
  const int64_t interval_ms = broker_.config().get_long("offsets.retention.check.interval.ms");
  timer_->schedule("expire-group-metadata", wall_ms() + interval_ms, [this] {
    coordinator_->expire_offsets();
    schedule_offsets_expiration();
  });
}

// Within offsets.commit.timeout.ms (internal_topic_log.h).
awaitable<Written> GroupService::write_batch(std::shared_ptr<replication::Partition> part, int32_t min_isr,
                                             Bytes batch) {
  const auto timeout = std::chrono::milliseconds(broker_.config().get_int("offsets.commit.timeout.ms"));
  CoordinatorAppend a = co_await append_coordinator_batch(broker_, std::move(part), min_isr, std::move(batch), timeout);
  co_return Written{a.error, a.base_offset};
}

void GroupService::write(int32_t partition, std::vector<OffsetsRecord> records, std::optional<TxnProducer> producer,
                         WriteDone done) {
  auto topic = broker_.topics().find(kOffsetsTopic);
  if (!topic) {
    request_offsets_topic();
    return done({protocol::ErrorCode::unknown_topic_or_partition});
  }
  auto part = broker_.replica_manager().get_partition(kOffsetsTopic, PartitionId(partition));
  if (!part) return done({protocol::ErrorCode::not_leader_or_follower});
  std::vector<rec::Record> rs(records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    rs[i].offset_delta = static_cast<int32_t>(i);
    rs[i].key = ByteView(records[i].key.data(), records[i].key.size());
    if (records[i].value) rs[i].value = ByteView(records[i].value->data(), records[i].value->size());
  }
  rec::BatchSpec spec;
  spec.base_timestamp = wall_ms();
  if (producer) {
    // As Kafka's coordinator builds it: the producer's id and epoch, base
    // sequence 0 (a coordinator's append is not sequence-checked).
    spec.transactional = true;
    spec.producer_id = producer->producer_id;
    spec.producer_epoch = producer->producer_epoch;
    spec.base_sequence = 0;
  }
  Bytes batch = rec::build_batch(spec, rs);
  asio::co_spawn(broker_.io(), write_batch(part, topic->config.min_insync_replicas, std::move(batch)),
                 [done = std::move(done)](std::exception_ptr e, Written w) {
                   done(e ? Written{protocol::ErrorCode::unknown_server_error} : w);
                 });
}

}  // namespace runnel::broker::group
