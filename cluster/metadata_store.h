// The cluster's metadata as versioned keys: one interface in front of every
// piece of state the cluster (not one partition) owns -- topics, dynamic
// broker configs, the producer-id block, and later broker registrations
// and the controller's election -- with etcd v3's model: a key has a value
// (bytes; Runnel writes JSON text) and the revision of its last change; a
// write can be made conditional on revisions (compare-and-swap, etcd's Txn);
// a prefix can be watched; a key can be bound to a lease that dies with
// its holder.
//
// Two implementations: LocalMetadataStore (one node, today's files in the
// first log dir) and EtcdMetadataStore (etcd's v3 JSON gateway). Keys are
// relative to the cluster (cluster/etcd/key_layout.h names each one); the
// etcd store puts its cluster prefix in front.
//
// Every call is made on the broker's event loop and completes there; none
// blocks it (files are written on the blocking pool, etcd is spoken to
// asynchronously). Expected failures (a revision that no longer matches)
// are results, not errors; errors are I/O (disk, every etcd endpoint down).
//
// Leases are in this interface, not in an etcd-only extension: broker
// registration (issue 13) is written once against MetadataStore, and on
// one node a lease is meaningful too -- a key bound to it disappears when
// it is revoked or not kept alive, and, since the local store never writes
// leased keys to disk, when the process ends, as an expired etcd lease's.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "base/ids.h"
#include "storage/errors.h"

namespace runnel::cluster {

namespace asio = boost::asio;
using asio::awaitable;
template <typename T>
using Result = storage::Result<T>;

struct LeaseIdTag {};
// etcd's lease id; 0 is "no lease".
using LeaseId = StrongId<int64_t, LeaseIdTag>;
inline constexpr LeaseId kNoLease{0};

// A store-wide, ever-growing change counter (etcd's revision). A key's
// mod_revision is the revision that last wrote it; 0 means "absent".
using Revision = int64_t;
inline constexpr Revision kAbsent = 0;

struct KeyValue {
  std::string key;
  std::string value;
  Revision create_revision = kAbsent;
  Revision mod_revision = kAbsent;
  LeaseId lease = kNoLease;
};

// The keys under a prefix (sorted by key) and the store's revision then.
struct RangeResult {
  std::vector<KeyValue> kvs;
  Revision revision = 0;
};

// A condition of a transaction: `key`'s mod_revision (or, with
// Target::create, its create_revision) equals `mod_revision` (kAbsent: the
// key does not exist). A create revision names one incarnation of a key:
// it survives updates and changes when the key is deleted and written again.
struct Compare {
  enum class Target { mod, create };
  std::string key;
  Revision mod_revision = kAbsent;
  Target target = Target::mod;
  static Compare created_at(std::string key, Revision create_revision) {
    return {std::move(key), create_revision, Target::create};
  }
};

// One write of a transaction.
struct Op {
  enum class Kind { put, erase, erase_prefix };
  Kind kind = Kind::put;
  std::string key;
  std::string value;
  LeaseId lease = kNoLease;  // put only: the key dies with this lease
  static Op put(std::string key, std::string value, LeaseId lease = kNoLease) {
    return {Kind::put, std::move(key), std::move(value), lease};
  }
  static Op erase(std::string key) { return {Kind::erase, std::move(key), {}, kNoLease}; }
  // Every key starting with `prefix`, as one op (etcd's DeleteRange with a
  // range end): a topic's partition keys, however many, within etcd's
  // --max-txn-ops.
  static Op erase_prefix(std::string prefix) { return {Kind::erase_prefix, std::move(prefix), {}, kNoLease}; }
};

// etcd's Txn: if every compare holds, every op is applied atomically at
// one new revision; else nothing is written and `current` says what each
// compared key holds now (absent keys left out), so the caller can retry.
struct Txn {
  std::vector<Compare> compares;
  std::vector<Op> ops;
};
struct TxnResult {
  bool succeeded = false;
  Revision revision = 0;  // the new revision on success, the store's on failure
  std::vector<KeyValue> current;
};

struct WatchEvent {
  enum class Kind { put, erase };
  Kind kind = Kind::put;
  KeyValue kv;  // for erase: the key and the revision of the delete
};
// Called on the event loop with each batch of changes, in revision order.
// An error (the store is gone, or history was compacted away) ends the watch.
using WatchCallback = std::function<void(std::error_code, const std::vector<WatchEvent>&)>;

// A watch lasts as long as this handle.
class Watch {
 public:
  virtual ~Watch() = default;
};

class MetadataStore {
 public:
  virtual ~MetadataStore() = default;
  virtual asio::any_io_executor get_executor() = 0;

  // The value of one key and its revisions; nullopt when absent.
  virtual awaitable<Result<std::optional<KeyValue>>> get(std::string key) = 0;
  // Every key starting with `prefix` ("" is everything): what a subscriber
  // loads at startup before it watches from revision + 1.
  virtual awaitable<Result<RangeResult>> range(std::string prefix) = 0;
  virtual awaitable<Result<TxnResult>> commit(Txn txn) = 0;
  // Changes of keys under `prefix` from `start_revision` on (0: from now).
  virtual std::unique_ptr<Watch> watch(std::string prefix, Revision start_revision, WatchCallback cb) = 0;

  // A lease of `ttl`; it expires unless kept alive within each ttl.
  virtual awaitable<Result<LeaseId>> grant_lease(std::chrono::seconds ttl) = 0;
  // Renews a lease; the ttl granted, or an error when it already expired.
  virtual awaitable<Result<std::chrono::seconds>> keep_alive(LeaseId lease) = 0;
  // Ends a lease now: its keys are deleted.
  virtual awaitable<std::error_code> revoke_lease(LeaseId lease) = 0;

  // Conveniences over commit().
  // Writes `key` if its mod_revision is still `expected` (kAbsent: only
  // if absent); nullopt value deletes it.
  awaitable<Result<TxnResult>> compare_and_swap(std::string key, Revision expected, std::optional<std::string> value);
  // An unconditional put; the new revision.
  awaitable<Result<Revision>> put(std::string key, std::string value, LeaseId lease = kNoLease);
  awaitable<Result<Revision>> erase(std::string key);
};

// The keys of a range() as a prefix's end (etcd's range_end): the first key
// after every key starting with `prefix`. "" for "" (everything).
std::string prefix_end(const std::string& prefix);

}  // namespace runnel::cluster
