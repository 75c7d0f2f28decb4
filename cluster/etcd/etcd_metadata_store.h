// The metadata store over etcd v3 (etcd_client.h): every key under the
// cluster's root (key_layout.h), compare-and-swap as etcd's Txn on
// mod_revision, watches as /v3/watch streams that resume from the next
// revision on another endpoint when one fails, leases as etcd's. Watch
// handles must go before the store does.
#pragma once

#include <map>
#include <memory>

#include "cluster/etcd/etcd_client.h"
#include "cluster/metadata_store.h"

namespace runnel::cluster::etcd {

class EtcdMetadataStore final : public MetadataStore {
 public:
  // `root`: keys::root(cluster id); every key is stored as root + key.
  EtcdMetadataStore(asio::any_io_executor ex, std::vector<Endpoint> endpoints, std::string root,
                    std::chrono::milliseconds timeout = std::chrono::seconds(5));
  ~EtcdMetadataStore() override;

  asio::any_io_executor get_executor() override { return ex_; }
  awaitable<Result<std::optional<KeyValue>>> get(std::string key) override;
  awaitable<Result<RangeResult>> range(std::string prefix) override;
  awaitable<Result<TxnResult>> commit(Txn txn) override;
  std::unique_ptr<Watch> watch(std::string prefix, Revision start_revision, WatchCallback cb) override;
  awaitable<Result<LeaseId>> grant_lease(std::chrono::seconds ttl) override;
  awaitable<Result<std::chrono::seconds>> keep_alive(LeaseId lease) override;
  awaitable<std::error_code> revoke_lease(LeaseId lease) override;

  Client& client() { return client_; }

 private:
  struct WatchState;
  class WatchHandle;
  awaitable<void> run_watch(std::shared_ptr<WatchState> state);
  Result<KeyValue> key_value(const boost::json::object& kv) const;

  asio::any_io_executor ex_;
  Client client_;
  std::string root_;
};

}  // namespace runnel::cluster::etcd
