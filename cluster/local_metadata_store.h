// The metadata store of a single node: the cluster's keys in memory, the
// durable ones in five files in the first log dir, in today's
// formats, so a data dir from before the store loads unchanged:
//
//   runnel-topics.json          {"version":1,"topics":[<topics/<name> values, by name>]}
//   runnel-broker-configs.json  {"broker":<configs/broker/<this node>>,
//                                "cluster_default":<configs/broker/<default>>}
//   runnel-producer-ids         <producer_ids>"\n"
//   runnel-acls.json            <acls>"\n" ("{}" once erased)
//   runnel-scram-credentials.json  <scram_credentials>"\n" (likewise)
//
// A commit applies on the event loop (so compare-and-swap is atomic), then
// rewrites each file it touched on the blocking pool (write, fsync, rename,
// fsync the dir); it completes, and watchers hear of it, once that is
// durable. When two writes of a file race, the newer contents stay on disk.
// A write that fails leaves memory ahead of the file (the caller is told;
// the next write of that file carries the change).
//
// Revisions count from the keys loaded at open() and are not stored: they
// order changes within one process, which is all one node needs. Other keys
// and every leased key live in memory only: a lease ends with the process.
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "cluster/metadata_store.h"

namespace runnel::cluster {

class LocalMetadataStore final : public MetadataStore {
 public:
  // `loop`: the event loop every call is made on; `blocking`: where files
  // are written; `dir`: the first log dir; `node`: this broker, whose
  // dynamic configs the configs file holds.
  LocalMetadataStore(asio::any_io_executor loop, asio::any_io_executor blocking, std::filesystem::path dir, NodeId node);
  ~LocalMetadataStore() override;

  // Reads the files (blocking: at startup, before the loop serves). A file
  // that does not parse fails the open, except the dynamic broker configs,
  // which are skipped with a warning as before the store.
  std::error_code open();
  // What open() skipped, for the broker's log.
  const std::vector<std::string>& warnings() const { return warnings_; }

  // A put written on the calling thread, in order with the pool's writes
  // of its file: for the one synchronous caller left (TopicTable::create,
  // the group coordinator's __consumer_offsets, which wrote its file on
  // the loop before the store too). Not in MetadataStore: etcd cannot.
  Result<Revision> put_now(std::string key, std::string value);

  asio::any_io_executor get_executor() override { return loop_; }
  awaitable<Result<std::optional<KeyValue>>> get(std::string key) override;
  awaitable<Result<RangeResult>> range(std::string prefix) override;
  awaitable<Result<TxnResult>> commit(Txn txn) override;
  std::unique_ptr<Watch> watch(std::string prefix, Revision start_revision, WatchCallback cb) override;
  awaitable<Result<LeaseId>> grant_lease(std::chrono::seconds ttl) override;
  awaitable<Result<std::chrono::seconds>> keep_alive(LeaseId lease) override;
  awaitable<std::error_code> revoke_lease(LeaseId lease) override;

 private:
  struct File;
  struct Lease {
    std::chrono::seconds ttl;
    std::unique_ptr<asio::steady_timer> timer;
    std::set<std::string> keys;
  };
  struct Watcher {
    std::string prefix;
    WatchCallback cb;
  };
  struct Pending {
    Revision revision;
    std::vector<WatchEvent> events;
    bool durable = false;
  };
  class WatchHandle;

  File* file_of(const std::string& key) const;
  std::vector<WatchEvent> apply(const std::vector<Op>& ops, Revision revision, std::set<File*>& touched);
  void deliver_durable();
  void mark_durable(Revision revision);
  void arm(LeaseId id);
  void expire(LeaseId id);

  asio::any_io_executor loop_;
  asio::any_io_executor blocking_;
  std::filesystem::path dir_;
  NodeId node_;
  std::vector<std::unique_ptr<File>> files_;
  std::map<std::string, KeyValue> kvs_;
  Revision revision_ = 0;
  std::vector<std::string> warnings_;
  std::map<LeaseId, Lease> leases_;
  int64_t next_lease_ = 1;
  std::map<uint64_t, Watcher> watchers_;
  uint64_t next_watcher_ = 1;
  std::deque<Pending> pending_;          // committed, being written, in revision order
  std::deque<WatchEvent> history_;       // delivered events, for watches that start in the past
  Revision compacted_ = 0;               // no history at or below this revision
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace runnel::cluster
