#include "cluster/broker_registry.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cluster/etcd/key_layout.h"
#include "cluster/metadata_codec.h"

namespace runnel::cluster {

namespace {

using Clock = std::chrono::steady_clock;

awaitable<void> sleep_for(std::chrono::milliseconds d) {
  asio::steady_timer t(co_await asio::this_coro::executor, d);
  co_await t.async_wait(asio::use_awaitable);
}

std::chrono::seconds ttl_of(std::chrono::milliseconds session) {
  // etcd leases are whole seconds; rounding down keeps the lease no longer
  // than the session Kafka users configured (at least one second).
  return std::max(std::chrono::seconds(1), std::chrono::duration_cast<std::chrono::seconds>(session));
}

}  // namespace

BrokerRegistry::BrokerRegistry(MetadataStore& store, BrokerRegistration self, RegistryOptions options)
    : store_(store), self_(std::move(self)), options_(options) {}

BrokerRegistry::~BrokerRegistry() { *alive_ = false; }

awaitable<Result<bool>> BrokerRegistry::try_register() {
  auto lease = co_await store_.grant_lease(ttl_of(options_.session_timeout));
  if (!lease) co_return lease.error();
  Txn txn;
  const std::string key = keys::broker(self_.id);
  txn.compares.push_back({key, kAbsent});
  txn.ops.push_back(Op::put(key, encode_broker(self_), *lease));
  auto r = co_await store_.commit(std::move(txn));
  if (!r || !r->succeeded) {
    (void)co_await store_.revoke_lease(*lease);
    if (!r) co_return r.error();
    co_return false;
  }
  lease_ = *lease;
  epoch_ = r->revision;  // the key's create revision
  co_return true;
}

awaitable<std::error_code> BrokerRegistry::start(std::chrono::milliseconds limit, std::function<void()> on_lost,
                                                 std::function<void(int64_t)> on_registered) {
  on_lost_ = std::move(on_lost);
  on_registered_ = std::move(on_registered);
  const auto deadline = Clock::now() + limit;
  for (;;) {
    auto ok = co_await try_register();
    if (ok && *ok) break;
    if (Clock::now() + options_.heartbeat_interval > deadline)
      co_return ok ? std::make_error_code(std::errc::address_in_use) : ok.error();
    co_await sleep_for(options_.heartbeat_interval);
  }
  if (on_registered_) on_registered_(epoch_);
  asio::co_spawn(store_.get_executor(), heartbeats(alive_), asio::detached);
  co_return std::error_code{};
}

awaitable<void> BrokerRegistry::heartbeats(std::shared_ptr<bool> alive) {
  auto last_renewal = Clock::now();
  const auto fence_after = options_.session_timeout - options_.heartbeat_interval;
  while (*alive && lease_ != kNoLease) {
    co_await sleep_for(options_.heartbeat_interval);
    if (!*alive || lease_ == kNoLease) co_return;
    auto renewed = co_await store_.keep_alive(lease_);
    if (!*alive) co_return;
    if (renewed) {
      last_renewal = Clock::now();
      continue;
    }
    if (Clock::now() - last_renewal < fence_after) continue;  // try again next beat
    // The session may be over: stop leading first, then register anew.
    const LeaseId lapsed = std::exchange(lease_, kNoLease);
    if (on_lost_) on_lost_();
    while (*alive) {
      // An etcd that was down and came back restores its leases with their
      // whole TTL: if this one lived, so did the registration, so no other
      // broker was elected in this one's place and it resumes, epoch and all
      // (registering anew would wait out that TTL first).
      if (co_await resume(lapsed)) {
        if (!*alive) co_return;
        last_renewal = Clock::now();
        if (on_registered_) on_registered_(epoch_);
        break;
      }
      if (!*alive) co_return;
      auto ok = co_await try_register();
      if (!*alive) co_return;
      if (ok && *ok) {
        last_renewal = Clock::now();
        if (on_registered_) on_registered_(epoch_);
        break;
      }
      co_await sleep_for(options_.heartbeat_interval);
    }
  }
}

awaitable<bool> BrokerRegistry::resume(LeaseId lapsed) {
  if (!(co_await store_.keep_alive(lapsed))) co_return false;
  auto current = co_await store_.get(keys::broker(self_.id));
  if (!current || !*current || (*current)->create_revision != epoch_ || (*current)->lease != lapsed) co_return false;
  lease_ = lapsed;
  co_return true;
}

awaitable<std::error_code> BrokerRegistry::fence_for_shutdown() {
  if (lease_ == kNoLease) co_return std::make_error_code(std::errc::not_connected);
  BrokerRegistration fenced = self_;
  fenced.fenced = true;
  // Only while this registration (its epoch: the key's create revision) is
  // the live one; a put would otherwise make a key no session owns.
  Txn txn;
  const std::string key = keys::broker(self_.id);
  auto current = co_await store_.get(key);
  if (!current) co_return current.error();
  if (!*current || (*current)->create_revision != epoch_) co_return std::make_error_code(std::errc::not_connected);
  txn.compares.push_back({key, (*current)->mod_revision});
  txn.ops.push_back(Op::put(key, encode_broker(fenced), lease_));
  auto r = co_await store_.commit(std::move(txn));
  if (!r) co_return r.error();
  co_return r->succeeded ? std::error_code{} : std::make_error_code(std::errc::not_connected);
}

awaitable<std::error_code> BrokerRegistry::stop() {
  *alive_ = false;
  alive_ = std::make_shared<bool>(true);
  if (lease_ == kNoLease) co_return std::error_code{};
  LeaseId lease = std::exchange(lease_, kNoLease);
  co_return co_await store_.revoke_lease(lease);
}

}  // namespace runnel::cluster
