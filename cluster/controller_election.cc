#include "cluster/controller_election.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"

namespace runnel::cluster {

ControllerElection::ControllerElection(MetadataStore& store, NodeId self, std::function<void(Revision)> on_elected,
                                       std::function<void()> on_resigned)
    : store_(store), self_(self), on_elected_(std::move(on_elected)), on_resigned_(std::move(on_resigned)) {}

ControllerElection::~ControllerElection() { *alive_ = false; }

void ControllerElection::resign() {
  if (!is_controller()) return;
  election_revision_ = 0;
  if (on_resigned_) on_resigned_();
}

Compare ControllerElection::fence() const { return {keys::kController, election_revision_}; }

void ControllerElection::start(LeaseId lease) {
  *alive_ = false;
  alive_ = std::make_shared<bool>(true);
  lease_ = lease;
  resign();
  // Every change of the key, from now on: a deletion means a campaign.
  watch_ = store_.watch(keys::kController, 0, [this, alive = alive_](std::error_code ec, const std::vector<WatchEvent>& events) {
    if (!*alive) return;
    if (ec) {
      // The watch ended (the store went away): no longer sure to lead.
      resign();
      return;
    }
    on_change(events);
  });
  asio::co_spawn(store_.get_executor(), campaign(alive_, lease), asio::detached);
}

void ControllerElection::stop() {
  *alive_ = false;
  watch_.reset();
  resign();
}

void ControllerElection::on_change(const std::vector<WatchEvent>& events) {
  for (const auto& e : events) {
    if (e.kv.key != keys::kController) continue;
    if (e.kind == WatchEvent::Kind::erase) {
      resign();
      asio::co_spawn(store_.get_executor(), campaign(alive_, lease_), asio::detached);
    } else if (e.kv.create_revision != election_revision_) {
      resign();  // another broker's election
    }
  }
}

awaitable<void> ControllerElection::campaign(std::shared_ptr<bool> alive, LeaseId lease) {
  if (lease == kNoLease) co_return;
  for (;;) {
    Txn txn;
    txn.compares.push_back({keys::kController, kAbsent});
    txn.ops.push_back(Op::put(keys::kController, encode_controller(self_), lease));
    auto r = co_await store_.commit(std::move(txn));
    if (!*alive || is_controller()) co_return;
    if (r) {
      // Lost to another broker: the watch says when the key goes.
      if (!r->succeeded) co_return;
      election_revision_ = r->revision;
      if (on_elected_) on_elected_(election_revision_);
      co_return;
    }
    // The store did not answer: campaign again shortly.
    asio::steady_timer t(store_.get_executor(), std::chrono::seconds(1));
    co_await t.async_wait(asio::use_awaitable);
    if (!*alive) co_return;
  }
}

}  // namespace runnel::cluster
