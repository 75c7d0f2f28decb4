#include "broker/hosted_partitions.h"

#include <vector>

#include "broker/broker.h"
#include "broker/group/group_service.h"
#include "broker/transaction/transaction_service.h"
#include "broker/logging.h"

namespace runnel::broker {

namespace {

using replication::Partition;
using replication::PartitionState;

struct ToOpen {
  std::shared_ptr<Topic> topic;
  int32_t index;
};

struct Opened {
  std::vector<std::shared_ptr<Partition>> partitions;
  std::vector<std::string> errors;
};

// Blocking: opens (creating where new) each partition's log.
std::function<Opened()> opening(storage::LogManager& logs, std::vector<std::pair<PartitionSpec, int32_t>> wanted) {
  return [&logs, wanted = std::move(wanted)] {
    Opened out;
    for (const auto& [spec, index] : wanted) {
      auto part = open_partition(logs, spec, index);
      if (part) out.partitions.push_back(std::move(*part));
      else out.errors.push_back(spec.topic + "-" + std::to_string(index) + ": " + part.error().message());
    }
    return out;
  };
}

bool same_state(const Partition& p, const PartitionState& s) {
  return p.leader_id() == s.leader && p.leader_epoch() == s.leader_epoch && p.replicas() == s.replicas &&
         p.isr() == s.isr;
}

}  // namespace

HostedPartitions::HostedPartitions(Broker& broker, Followers followers)
    : broker_(broker), followers_(std::move(followers)) {}

HostedPartitions::~HostedPartitions() { *alive_ = false; }

void HostedPartitions::on_image(cluster::ImagePtr image) {
  next_ = std::move(image);
  if (running_) return;
  running_ = true;
  asio::co_spawn(broker_.io(), run(alive_), asio::detached);
}

void HostedPartitions::fence() {
  fenced_ = true;
  if (last_) on_image(broker_.metadata_cache().image());
}

void HostedPartitions::unfence() {
  fenced_ = false;
  on_image(broker_.metadata_cache().image());
}

awaitable<void> HostedPartitions::run(std::shared_ptr<bool> alive) {
  while (*alive && next_) {
    cluster::ImagePtr image = std::exchange(next_, nullptr);
    co_await reconcile(*image);
    if (!*alive) co_return;
    last_ = std::move(image);
  }
  running_ = false;
  for (auto& waiter : std::exchange(waiters_, {})) waiter->cancel();
}

awaitable<void> HostedPartitions::wait_caught_up(std::chrono::milliseconds bound) {
  if (caught_up()) co_return;
  auto alive = alive_;
  auto waiter = std::make_shared<asio::steady_timer>(broker_.io(), bound);
  waiters_.push_back(waiter);
  co_await waiter->async_wait(as_tuple_awaitable);
  if (*alive) std::erase(waiters_, waiter);
}

bool HostedPartitions::leads_unopened(const std::string& topic, PartitionId partition) const {
  if (caught_up()) return false;
  const auto& image = broker_.metadata_cache().image();
  const cluster::PartitionRegistration* reg = image ? image->partition(topic, partition) : nullptr;
  return reg && reg->leader == broker_.replica_manager().local_node() &&
         !broker_.replica_manager().get_partition(topic, partition);
}

void HostedPartitions::apply(const std::shared_ptr<Partition>& hosted, const cluster::PartitionRegistration& registration) {
  Partition& partition = *hosted;
  const NodeId self = broker_.replica_manager().local_node();
  PartitionState state{registration.leader, registration.leader_epoch, registration.replicas, registration.isr};
  if (fenced_ && state.leader == self) state.leader = kNoNode;
  if (same_state(partition, state)) return;
  const bool was_leader = partition.is_leader();
  partition.become_leader_or_follower(state);
  if (partition.is_leader()) {
    if (followers_.unfollow) followers_.unfollow(partition.topic(), partition.id());
    if (!was_leader)
      RLOG_INFO("%s-%d: leader at epoch %d", partition.topic().c_str(), partition.index(), state.leader_epoch.value());
  } else if (state.leader == kNoNode) {
    if (followers_.unfollow) followers_.unfollow(partition.topic(), partition.id());
  } else if (followers_.follow) {
    followers_.follow(hosted, state.leader, state.leader_epoch);
  }
  if (partition.topic() == group::kOffsetsTopic) broker_.groups().leadership_changed(partition.index(), partition.is_leader());
  if (partition.topic() == transaction::kTransactionStateTopic)
    broker_.transactions().leadership_changed(partition.index(), partition.is_leader(),
                                              partition.leader_epoch().value());
  // Waiting fetches, produces and DeleteRecords look again: a deposed
  // leader answers them.
  partition.try_complete_delayed_requests();
}

awaitable<void> HostedPartitions::reconcile(const cluster::MetadataImage& image) {
  TopicTable& table = broker_.topics();
  replication::ReplicaManager& replicas = broker_.replica_manager();
  const NodeId self = replicas.local_node();

  // Topics gone from the image, or whose name now stands for another id.
  std::vector<std::string> gone;
  for (const auto& [name, topic] : table.topics()) {
    auto now = image.topic(name);
    if (!now || now->id != topic->id) gone.push_back(name);
  }
  for (auto& name : gone) co_await remove_topic(std::move(name));

  std::vector<ToOpen> to_open;
  std::vector<std::pair<PartitionSpec, int32_t>> specs;
  for (const auto& [name, t] : image.topics()) {
    auto topic = table.mirror(*t);
    std::vector<int32_t> dropped;
    for (size_t i = 0; i < t->partitions.size(); ++i) {
      const auto& reg = t->partitions[i];
      const auto index = static_cast<int32_t>(i);
      std::shared_ptr<Partition> hosted = replicas.get_partition(name, PartitionId(index));
      if (reg.is_replica(self)) {
        if (hosted) apply(hosted, reg);
        else {
          to_open.push_back({topic, index});
          PartitionSpec spec = table.partition_spec(*topic);
          spec.single_node = false;
          specs.emplace_back(std::move(spec), index);
        }
      } else if (hosted) {
        // Reassigned elsewhere: stop and remove this replica.
        if (followers_.unfollow) followers_.unfollow(name, hosted->id());
        if (name == group::kOffsetsTopic && hosted->is_leader()) broker_.groups().leadership_changed(index, false);
        if (name == transaction::kTransactionStateTopic) broker_.transactions().leadership_changed(index, false, -1);
        // It leads no more: acks=all produces and DeleteRecords waiting on
        // it answer now (the client retries at the new leader) instead of
        // at their timeout.
        hosted->become_leader_or_follower({reg.leader, reg.leader_epoch, reg.replicas, reg.isr});
        replicas.remove_partition(name, PartitionId(index));
        hosted->try_complete_delayed_requests();
        dropped.push_back(index);
      }
    }
    if (!dropped.empty())
      (void)co_await broker_.run_blocking(removing_partition_logs(broker_.logs(), name, std::move(dropped)));
  }
  if (specs.empty()) co_return;

  Opened opened = co_await broker_.run_blocking(opening(broker_.logs(), std::move(specs)));
  for (const auto& e : opened.errors) RLOG_ERROR("cannot open replica %s", e.c_str());
  // The image may have moved on while the logs opened: the newest one says
  // how each leads or follows, and the next reconciliation drops any that
  // is no longer assigned here.
  const cluster::MetadataImage& latest = *broker_.metadata_cache().image();
  for (auto& part : opened.partitions) {
    auto topic = table.find(part->topic());
    const cluster::PartitionRegistration* reg = latest.partition(part->topic(), part->id());
    if (!topic || !reg || topic->id != latest.topic(part->topic())->id) continue;
    part->log().set_config(topic->config.log);
    replicas.add_partition(part);
    apply(part, *reg);
  }
}

awaitable<void> HostedPartitions::remove_topic(std::string name) {
  TopicTable& table = broker_.topics();
  auto topic = table.find(name);
  if (!topic) co_return;
  std::vector<int32_t> indexes;
  std::vector<std::shared_ptr<Partition>> removed = broker_.replica_manager().remove_topic(name);
  for (const auto& p : removed) {
    if (followers_.unfollow) followers_.unfollow(name, p->id());
    indexes.push_back(p->index());
  }
  table.unpublish(*topic);
  if (name == group::kOffsetsTopic) broker_.groups().offsets_topic_deleted();
  if (name == transaction::kTransactionStateTopic) broker_.transactions().state_topic_deleted();
  (void)co_await broker_.run_blocking(removing_partition_logs(broker_.logs(), name, std::move(indexes)));
  for (auto& p : removed) p->try_complete_delayed_requests();
  RLOG_INFO("deleted topic %s: its replicas here are removed", name.c_str());
}

}  // namespace runnel::broker
