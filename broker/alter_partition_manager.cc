#include "broker/alter_partition_manager.h"

#include <algorithm>

#include "base/clock.h"
#include "broker/broker.h"
#include "broker/logging.h"
#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"
#include "cluster/partition_change.h"
#include "cluster/topic_writes.h"

namespace runnel::broker {

namespace {

std::string ids(const std::vector<NodeId>& nodes) {
  std::string out;
  for (NodeId n : nodes) out += (out.empty() ? "" : ",") + std::to_string(n.value());
  return "[" + out + "]";
}

}  // namespace

AlterPartitionManager::AlterPartitionManager(Broker& broker, std::chrono::milliseconds replica_lag_time_max)
    : broker_(broker), lag_max_(replica_lag_time_max) {}

AlterPartitionManager::~AlterPartitionManager() { *alive_ = false; }

void AlterPartitionManager::start() { asio::co_spawn(broker_.io(), shrink_checks(alive_), asio::detached); }

awaitable<void> AlterPartitionManager::shrink_checks(std::shared_ptr<bool> alive) {
  asio::steady_timer timer(broker_.io());
  // Kafka's isr-expiration task runs at half the lag bound, so a replica
  // is out of the ISR at most 1.5 times replica.lag.time.max.ms after it stopped.
  const auto interval = std::max(std::chrono::milliseconds(10), lag_max_ / 2);
  while (*alive && !broker_.stopping()) {
    timer.expires_after(interval);
    co_await timer.async_wait(as_tuple_awaitable);
    if (!*alive || broker_.stopping()) co_return;
    broker_.replica_manager().for_each_partition([this](const std::shared_ptr<replication::Partition>& p) {
      if (p->is_leader()) maybe_shrink_isr(*p);
    });
  }
}

void AlterPartitionManager::maybe_shrink_isr(replication::Partition& partition) {
  const auto out = partition.out_of_sync_replicas(Clock::system().wall_ms(), lag_max_.count());
  if (out.empty()) return;
  std::vector<NodeId> isr;
  for (NodeId n : partition.isr())
    if (std::find(out.begin(), out.end(), n) == out.end()) isr.push_back(n);
  submit(partition, std::move(isr), "shrink");
}

void AlterPartitionManager::maybe_expand_isr(replication::Partition& partition, NodeId follower) {
  if (!partition.is_leader() || partition.in_isr(follower) || !partition.is_caught_up_for_isr(follower)) return;
  std::vector<NodeId> isr = partition.isr();
  isr.push_back(follower);
  submit(partition, std::move(isr), "expand");
}

void AlterPartitionManager::submit(replication::Partition& partition, std::vector<NodeId> isr, const char* why) {
  auto key = std::make_pair(partition.topic(), partition.index());
  if (!in_flight_.insert(key).second) return;
  asio::co_spawn(broker_.io(), write(partition.topic(), partition.id(), partition.leader_epoch(), std::move(isr), why),
                 asio::detached);
}

awaitable<void> AlterPartitionManager::write(std::string topic, PartitionId id, LeaderEpoch epoch,
                                             std::vector<NodeId> isr, std::string why) {
  const cluster::ImagePtr image = broker_.metadata_cache().image();
  const cluster::TopicPtr in_image = image->topic(topic);
  const cluster::PartitionRegistration* current = in_image ? in_image->partition(id) : nullptr;
  auto done = [this, key = std::make_pair(topic, id.value())] { in_flight_.erase(key); };
  if (!current) co_return done();
  auto live = [&image](NodeId n) { return image->is_live(n); };
  auto next = cluster::alter_isr(*current, broker_.replica_manager().local_node(), epoch, isr, live);
  if (auto* refused = std::get_if<cluster::IsrChangeError>(&next)) {
    RLOG_WARN("%s-%d: ISR %s to %s refused: %s", topic.c_str(), id.value(), why.c_str(), ids(isr).c_str(),
              refused->error.c_str());
    co_return done();
  }
  const auto& registration = std::get<cluster::PartitionRegistration>(next);
  if (registration == *current) co_return done();
  auto written = co_await broker_.metadata().commit(cluster::partition_change_txn(*in_image, id, registration));
  if (!written) {
    RLOG_WARN("%s-%d: ISR %s not written: %s", topic.c_str(), id.value(), why.c_str(), written.error().message().c_str());
  } else if (!written->succeeded) {
    RLOG_INFO("%s-%d: ISR %s lost to a newer change of the partition", topic.c_str(), id.value(), why.c_str());
  } else {
    RLOG_INFO("%s-%d: ISR %s from %s to %s (partition epoch %d)", topic.c_str(), id.value(), why.c_str(),
              ids(current->isr).c_str(), ids(registration.isr).c_str(), registration.partition_epoch);
    if (registration.isr.size() < current->isr.size()) ++isr_shrinks_;
    if (registration.isr.size() > current->isr.size()) ++isr_expands_;
    if (current->reassigning() && !registration.reassigning())
      RLOG_INFO("%s-%d: reassignment completed: replicas %s, leader %d at epoch %d", topic.c_str(), id.value(),
                ids(registration.replicas).c_str(), registration.leader.value(), registration.leader_epoch.value());
    // The ISR changes when the image brings the write back: wait for it,
    // so no second change is built on the old registration.
    (void)co_await broker_.wait_for_image(written->revision, std::chrono::milliseconds(
                                                                  broker_.config().get_int("request.timeout.ms")));
  }
  done();
}

}  // namespace runnel::broker
