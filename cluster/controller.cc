#include "cluster/controller.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <map>

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"
#include "cluster/partition_change.h"
#include "cluster/topic_writes.h"

namespace runnel::cluster {

namespace {

IsLive live_in(const MetadataImage& image) {
  return [&image](NodeId n) { return image.is_live(n); };
}

}  // namespace

Controller::Controller(MetadataStore& store, const ControllerElection& election, ControllerOptions options, Log log)
    : store_(store), election_(election), options_(options), log_(std::move(log)) {}

Controller::~Controller() { *alive_ = false; }

void Controller::on_image(ImagePtr image) {
  latest_ = image;
  next_ = std::move(image);
  if (!election_.is_controller()) return;
  if (options_.auto_leader_rebalance && !rebalancing_) {
    rebalancing_ = true;
    asio::co_spawn(store_.get_executor(), rebalance_checks(alive_), asio::detached);
  }
  if (running_) return;
  running_ = true;
  asio::co_spawn(store_.get_executor(), run(alive_), asio::detached);
}

awaitable<void> Controller::run(std::shared_ptr<bool> alive) {
  while (*alive && next_ && election_.is_controller()) {
    ImagePtr image = std::exchange(next_, nullptr);
    co_await reconcile(*image);
    if (!*alive) co_return;
  }
  running_ = false;
}

awaitable<void> Controller::reconcile(const MetadataImage& image) {
  const IsLive live = live_in(image);
  std::vector<Change> changes;
  for (const auto& [name, topic] : image.topics()) {
    // The topic's unclean.leader.election.enable, over the broker's.
    bool unclean = options_.unclean_leader_election;
    if (auto it = topic->configs.find("unclean.leader.election.enable"); it != topic->configs.end())
      unclean = it->second == "true";
    for (size_t i = 0; i < topic->partitions.size(); ++i) {
      const PartitionRegistration& current = topic->partitions[i];
      if (auto next = reelect(current, live, unclean))
        changes.push_back({topic.get(), static_cast<int32_t>(i), &current, std::move(*next)});
    }
  }
  co_await write(std::move(changes), "re-elected");
}

awaitable<void> Controller::rebalance_checks(std::shared_ptr<bool> alive) {
  asio::steady_timer timer(store_.get_executor());
  while (*alive && election_.is_controller()) {
    timer.expires_after(options_.imbalance_check_interval);
    co_await timer.async_wait(asio::use_awaitable);
    if (!*alive || !election_.is_controller() || !latest_) break;
    // Held for the check: the writes below point into it.
    const ImagePtr image = latest_;
    const IsLive live = live_in(*image);
    // Per preferred broker: its partitions, and those led elsewhere that it could lead.
    std::map<NodeId, std::pair<size_t, std::vector<Change>>> by_preferred;
    for (const auto& [name, topic] : image->topics())
      for (size_t i = 0; i < topic->partitions.size(); ++i) {
        const PartitionRegistration& current = topic->partitions[i];
        if (current.replicas.empty()) continue;
        auto& [count, moves] = by_preferred[current.replicas.front()];
        ++count;
        if (auto next = elect_preferred(current, live))
          moves.push_back({topic.get(), static_cast<int32_t>(i), &current, std::move(*next)});
      }
    std::vector<Change> changes;
    for (auto& [broker, entry] : by_preferred) {
      auto& [count, moves] = entry;
      if (moves.empty() || moves.size() * 100 <= count * static_cast<size_t>(options_.imbalance_percentage)) continue;
      for (auto& m : moves) changes.push_back(std::move(m));
    }
    co_await write(std::move(changes), "given back to its preferred leader");
  }
  if (*alive) rebalancing_ = false;
}

awaitable<void> Controller::write(std::vector<Change> changes, const char* why) {
  Txn txn;
  size_t in_txn = 0;
  std::vector<std::string> moves;  // logged once written
  for (size_t c = 0; c < changes.size(); ++c) {
    const Change& ch = changes[c];
    add_partition_change(txn, ch.topic->name, ch.topic->create_revision, ch.partition, *ch.current, ch.next);
    if (ch.next.leader != ch.current->leader)
      moves.push_back("controller: " + ch.topic->name + "-" + std::to_string(ch.partition) + " " + why + ": leader " +
                      std::to_string(ch.current->leader.value()) + " -> " + std::to_string(ch.next.leader.value()) +
                      " at epoch " + std::to_string(ch.next.leader_epoch.value()));
    if (++in_txn < options_.max_ops_per_txn && c + 1 < changes.size()) continue;
    txn.compares.push_back(election_.fence());
    auto r = co_await store_.commit(std::exchange(txn, Txn{}));
    if (!r) {
      log_("controller: writing " + std::to_string(in_txn) + " partition changes failed: " + r.error().message());
      co_return;
    }
    // A conflict: a leader changed its ISR meanwhile, or this broker lost
    // the election. The image that change brings is reconciled next.
    if (!r->succeeded) co_return;
    for (const auto& m : moves) log_(m);
    moves.clear();
    written_ += in_txn;
    in_txn = 0;
  }
}

}  // namespace runnel::cluster
