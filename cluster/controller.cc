#include "cluster/controller.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"
#include "cluster/partition_change.h"

namespace runnel::cluster {

Controller::Controller(MetadataStore& store, const ControllerElection& election, ControllerOptions options, Log log)
    : store_(store), election_(election), options_(options), log_(std::move(log)) {}

Controller::~Controller() { *alive_ = false; }

void Controller::on_image(ImagePtr image) {
  next_ = std::move(image);
  if (running_ || !election_.is_controller()) return;
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
  auto live = [&image](NodeId n) {
    const BrokerRegistration* b = image.broker(n);
    return b && !b->fenced;
  };
  Txn txn;
  size_t changes = 0;
  auto flush = [&]() -> awaitable<bool> {
    if (txn.ops.empty()) co_return true;
    txn.compares.push_back(election_.fence());
    auto r = co_await store_.commit(std::exchange(txn, Txn{}));
    if (!r) {
      log_("controller: writing " + std::to_string(changes) + " partition changes failed: " + r.error().message());
      co_return false;
    }
    // A conflict: a leader changed its ISR meanwhile, or this broker lost
    // the election. The image that change brings is reconciled next.
    if (r->succeeded) written_ += changes;
    changes = 0;
    co_return r->succeeded;
  };
  for (const auto& [name, topic] : image.topics()) {
    for (size_t i = 0; i < topic->partitions.size(); ++i) {
      const PartitionRegistration& current = topic->partitions[i];
      auto next = reelect(current, live, options_.unclean_leader_election);
      if (!next) continue;
      const std::string key = keys::partition(name, static_cast<int32_t>(i));
      txn.compares.push_back({key, current.mod_revision});
      txn.ops.push_back(Op::put(key, encode_partition(*next)));
      if (next->leader != current.leader)
        log_("controller: " + name + "-" + std::to_string(i) + " leader " + std::to_string(current.leader.value()) +
             " -> " + std::to_string(next->leader.value()) + " at epoch " +
             std::to_string(next->leader_epoch.value()));
      if (++changes >= options_.max_ops_per_txn && !co_await flush()) co_return;
    }
  }
  co_await flush();
}

}  // namespace runnel::cluster
