#include "cluster/local_metadata_store.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/json.hpp>
#include <functional>

#include "cluster/blocking.h"
#include "cluster/errors.h"
#include "cluster/etcd/key_layout.h"
#include "storage/io.h"

namespace runnel::cluster {

namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

constexpr const char* kTopicsFile = "runnel-topics.json";
constexpr const char* kConfigsFile = "runnel-broker-configs.json";
constexpr const char* kProducerIdsFile = "runnel-producer-ids";
constexpr const char* kAclsFile = "runnel-acls.json";
constexpr const char* kScramCredentialsFile = "runnel-scram-credentials.json";
constexpr const char* kClientQuotasFile = "runnel-client-quotas.json";
// The files that each hold one key's JSON object, "{}" while it is absent:
// they decide who may do what and how much, so a damaged one stops startup
// rather than open the broker with none.
constexpr std::pair<const char*, const char*> kSingleKeyFiles[] = {
    {kAclsFile, keys::kAcls},
    {kScramCredentialsFile, keys::kScramCredentials},
    {kClientQuotasFile, keys::kClientQuotas},
};
// runnel-broker-configs.json's members.
constexpr const char* kBrokerLayer = "broker";
constexpr const char* kDefaultLayer = "cluster_default";
// Delivered events kept for watches that start in the past.
constexpr size_t kHistory = 1000;

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

bool is_json_object(const std::string& text) {
  boost::system::error_code ec;
  auto v = json::parse(text, ec);
  return !ec && v.is_object();
}

json::value parse_or_empty(const std::map<std::string, KeyValue>& kvs, const std::string& key) {
  auto it = kvs.find(key);
  if (it == kvs.end() || it->second.lease != kNoLease) return json::object();
  return json::parse(it->second.value);
}

// One write of a file, built outside the coroutine (GCC 12 miscompiles a
// lambda with captures inside a co_await expression).
std::function<std::error_code()> writing(std::mutex* mu, uint64_t* written, fs::path path, std::string text,
                                         uint64_t generation) {
  return [=, text = std::move(text)]() -> std::error_code {
    std::lock_guard lock(*mu);
    if (generation <= *written) return {};  // newer contents are on disk already
    if (auto ec = storage::write_file_atomically(path, text)) return ec;
    *written = generation;
    return {};
  };
}

}  // namespace

// One of today's files and the keys it holds.
struct LocalMetadataStore::File {
  std::string name;
  std::function<bool(const std::string& key)> holds;
  std::function<bool(const std::string& value)> valid;
  std::function<std::string(const std::map<std::string, KeyValue>&)> encode;
  uint64_t generation = 0;  // on the loop
  std::mutex mu;            // the blocking pool's writers
  uint64_t written = 0;     // under mu
};

class LocalMetadataStore::WatchHandle final : public Watch {
 public:
  WatchHandle(LocalMetadataStore* store, uint64_t id) : store_(store), alive_(store->alive_), id_(id) {}
  ~WatchHandle() override {
    if (alive_.lock()) store_->watchers_.erase(id_);
  }

 private:
  LocalMetadataStore* store_;
  std::weak_ptr<bool> alive_;
  uint64_t id_;
};

LocalMetadataStore::LocalMetadataStore(asio::any_io_executor loop, asio::any_io_executor blocking, fs::path dir,
                                       NodeId node)
    : loop_(std::move(loop)), blocking_(std::move(blocking)), dir_(std::move(dir)), node_(node) {
  auto topics = std::make_unique<File>();
  topics->name = kTopicsFile;
  topics->holds = [](const std::string& k) { return starts_with(k, keys::kTopicsPrefix); };
  topics->valid = is_json_object;
  topics->encode = [](const std::map<std::string, KeyValue>& kvs) {
    json::array list;
    for (auto it = kvs.lower_bound(keys::kTopicsPrefix); it != kvs.end() && starts_with(it->first, keys::kTopicsPrefix);
         ++it)
      if (it->second.lease == kNoLease) list.push_back(json::parse(it->second.value));
    json::object doc{{"version", 1}, {"topics", std::move(list)}};
    return json::serialize(doc) + "\n";
  };
  files_.push_back(std::move(topics));

  auto configs = std::make_unique<File>();
  configs->name = kConfigsFile;
  const std::string mine = keys::broker_config(node_), all = keys::cluster_default_config();
  configs->holds = [mine, all](const std::string& k) { return k == mine || k == all; };
  configs->valid = is_json_object;
  configs->encode = [mine, all](const std::map<std::string, KeyValue>& kvs) {
    json::object doc;
    doc[kBrokerLayer] = parse_or_empty(kvs, mine);
    doc[kDefaultLayer] = parse_or_empty(kvs, all);
    return json::serialize(doc) + "\n";
  };
  files_.push_back(std::move(configs));

  auto ids = std::make_unique<File>();
  ids->name = kProducerIdsFile;
  ids->holds = [](const std::string& k) { return k == keys::kProducerIds; };
  ids->valid = [](const std::string& v) { return v.find('\n') == std::string::npos; };
  ids->encode = [](const std::map<std::string, KeyValue>& kvs) {
    auto it = kvs.find(keys::kProducerIds);
    return it == kvs.end() || it->second.lease != kNoLease ? std::string() : it->second.value + "\n";
  };
  files_.push_back(std::move(ids));

  for (auto [name, key] : kSingleKeyFiles) {
    auto file = std::make_unique<File>();
    file->name = name;
    file->holds = [key = std::string(key)](const std::string& k) { return k == key; };
    file->valid = is_json_object;
    file->encode = [key = std::string(key)](const std::map<std::string, KeyValue>& kvs) {
      auto it = kvs.find(key);
      return it == kvs.end() || it->second.lease != kNoLease ? std::string("{}\n") : it->second.value + "\n";
    };
    files_.push_back(std::move(file));
  }
}

LocalMetadataStore::~LocalMetadataStore() {
  *alive_ = false;
  for (auto& [id, lease] : leases_) lease.timer->cancel();
}

std::error_code LocalMetadataStore::open() {
  auto load = [this](const std::string& key, std::string value) {
    const Revision rev = ++revision_;
    kvs_[key] = KeyValue{key, std::move(value), rev, rev, kNoLease};
  };
  auto read = [this](const char* name) -> std::optional<Result<std::string>> {
    fs::path path = dir_ / name;
    if (!fs::exists(path)) return std::nullopt;
    return storage::read_whole_file(path);
  };

  if (auto text = read(kTopicsFile)) {
    if (!*text) return text->error();
    try {
      const json::value doc = json::parse(**text);
      for (const auto& t : doc.at("topics").as_array())
        load(keys::topic(std::string(t.at("name").as_string())), json::serialize(t));
    } catch (const std::exception& e) {
      warnings_.push_back(std::string(kTopicsFile) + " is not valid: " + e.what());
      return make_error_code(ClusterErrc::corrupt_file);
    }
  }

  if (auto text = read(kConfigsFile)) {
    boost::system::error_code ec;
    json::value doc = *text ? json::parse(**text, ec) : json::value();
    if (!*text || ec || !doc.is_object()) {
      warnings_.push_back("ignoring unreadable dynamic broker configs in " + (dir_ / kConfigsFile).string());
    } else {
      for (auto [member, key] : {std::pair{kBrokerLayer, keys::broker_config(node_)},
                                 std::pair{kDefaultLayer, keys::cluster_default_config()}})
        if (auto* layer = doc.as_object().if_contains(member); layer && layer->is_object())
          load(key, json::serialize(*layer));
    }
  }

  if (auto text = read(kProducerIdsFile)) {
    if (!*text) return text->error();
    std::string value = **text;
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    load(keys::kProducerIds, std::move(value));
  }
  for (auto [name, key] : kSingleKeyFiles) {
    auto text = read(name);
    if (!text) continue;
    if (!*text) return text->error();
    if (!is_json_object(**text)) {
      warnings_.push_back(std::string(name) + " is not valid JSON");
      return make_error_code(ClusterErrc::corrupt_file);
    }
    std::string value = **text;
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    if (value != "{}") load(key, std::move(value));
  }
  compacted_ = revision_;  // what was loaded has no history to watch
  return {};
}

LocalMetadataStore::File* LocalMetadataStore::file_of(const std::string& key) const {
  for (const auto& f : files_)
    if (f->holds(key)) return f.get();
  return nullptr;
}

awaitable<Result<std::optional<KeyValue>>> LocalMetadataStore::get(std::string key) {
  auto it = kvs_.find(key);
  co_return it == kvs_.end() ? std::optional<KeyValue>() : std::optional<KeyValue>(it->second);
}

awaitable<Result<RangeResult>> LocalMetadataStore::range(std::string prefix) {
  RangeResult r;
  r.revision = revision_;
  for (auto it = kvs_.lower_bound(prefix); it != kvs_.end() && starts_with(it->first, prefix); ++it)
    r.kvs.push_back(it->second);
  co_return r;
}

std::vector<WatchEvent> LocalMetadataStore::apply(const std::vector<Op>& ops, Revision revision,
                                                  std::set<File*>& touched) {
  std::vector<WatchEvent> events;
  std::vector<Op> expanded;  // an erase_prefix as one erase per key it covers
  for (const auto& op : ops) {
    if (op.kind != Op::Kind::erase_prefix) {
      expanded.push_back(op);
      continue;
    }
    for (auto it = kvs_.lower_bound(op.key); it != kvs_.end() && starts_with(it->first, op.key); ++it)
      expanded.push_back(Op::erase(it->first));
  }
  for (const auto& op : expanded) {
    auto it = kvs_.find(op.key);
    bool was_durable = it != kvs_.end() && it->second.lease == kNoLease;
    if (it != kvs_.end() && it->second.lease != kNoLease)
      if (auto l = leases_.find(it->second.lease); l != leases_.end()) l->second.keys.erase(op.key);
    if (op.kind == Op::Kind::put) {
      KeyValue& kv = kvs_[op.key];
      if (kv.create_revision == kAbsent) kv.create_revision = revision;
      kv.key = op.key;
      kv.value = op.value;
      kv.mod_revision = revision;
      kv.lease = op.lease;
      if (op.lease != kNoLease) leases_.at(op.lease).keys.insert(op.key);
      if (File* f = file_of(op.key); f && (op.lease == kNoLease || was_durable)) touched.insert(f);
      events.push_back({WatchEvent::Kind::put, kv});
    } else if (it != kvs_.end()) {
      kvs_.erase(it);
      if (File* f = file_of(op.key); f && was_durable) touched.insert(f);
      events.push_back({WatchEvent::Kind::erase, KeyValue{op.key, {}, kAbsent, revision, kNoLease}});
    }
  }
  return events;
}

awaitable<Result<TxnResult>> LocalMetadataStore::commit(Txn txn) {
  TxnResult result;
  bool holds = true;
  for (const auto& c : txn.compares) {
    auto it = kvs_.find(c.key);
    Revision revision = kAbsent;
    if (it != kvs_.end())
      revision = c.target == Compare::Target::mod ? it->second.mod_revision : it->second.create_revision;
    if (revision != c.mod_revision) holds = false;
  }
  if (!holds) {
    for (const auto& c : txn.compares)
      if (auto it = kvs_.find(c.key); it != kvs_.end()) result.current.push_back(it->second);
    result.revision = revision_;
    co_return result;
  }
  for (const auto& op : txn.ops) {
    if (op.kind != Op::Kind::put) continue;
    if (op.lease != kNoLease && !leases_.count(op.lease)) co_return std::error_code(ClusterErrc::lease_not_found);
    if (File* f = file_of(op.key); f && op.lease == kNoLease && !f->valid(op.value))
      co_return std::make_error_code(std::errc::invalid_argument);
  }

  const Revision rev = ++revision_;
  std::set<File*> touched;
  pending_.push_back({rev, apply(txn.ops, rev, touched)});
  std::error_code error;
  for (File* f : touched) {
    auto work = writing(&f->mu, &f->written, dir_ / f->name, f->encode(kvs_), ++f->generation);
    if (auto ec = co_await run_blocking(blocking_, std::move(work)); ec && !error) error = ec;
  }
  mark_durable(rev);
  if (error) co_return error;
  result.succeeded = true;
  result.revision = rev;
  co_return result;
}

Result<Revision> LocalMetadataStore::put_now(std::string key, std::string value) {
  File* file = file_of(key);
  if (file && !file->valid(value)) return std::make_error_code(std::errc::invalid_argument);
  std::optional<KeyValue> before;
  if (auto it = kvs_.find(key); it != kvs_.end()) before = it->second;
  const Revision rev = ++revision_;
  std::set<File*> touched;
  pending_.push_back({rev, apply({Op::put(key, std::move(value))}, rev, touched)});
  std::error_code error;
  for (File* f : touched)
    if (auto ec = writing(&f->mu, &f->written, dir_ / f->name, f->encode(kvs_), ++f->generation)(); ec && !error)
      error = ec;
  if (error) {
    // Synchronous, so nothing else changed meanwhile: undo, unheard.
    if (before) {
      kvs_[key] = *before;
      if (auto l = leases_.find(before->lease); l != leases_.end()) l->second.keys.insert(key);
    } else {
      kvs_.erase(key);
    }
    std::erase_if(pending_, [rev](const Pending& p) { return p.revision == rev; });
    deliver_durable();
    return error;
  }
  mark_durable(rev);
  return rev;
}

void LocalMetadataStore::mark_durable(Revision revision) {
  for (auto& p : pending_)
    if (p.revision == revision) p.durable = true;
  deliver_durable();
}

void LocalMetadataStore::deliver_durable() {
  while (!pending_.empty() && pending_.front().durable) {
    std::vector<WatchEvent> events = std::move(pending_.front().events);
    pending_.pop_front();
    for (const auto& e : events) {
      history_.push_back(e);
      if (history_.size() > kHistory) {
        compacted_ = history_.front().kv.mod_revision;
        history_.pop_front();
      }
    }
    std::vector<uint64_t> ids;
    for (const auto& [id, w] : watchers_) ids.push_back(id);
    for (uint64_t id : ids) {
      auto it = watchers_.find(id);
      if (it == watchers_.end()) continue;  // removed by an earlier callback
      std::vector<WatchEvent> mine;
      for (const auto& e : events)
        if (starts_with(e.kv.key, it->second.prefix)) mine.push_back(e);
      if (!mine.empty()) it->second.cb({}, mine);
    }
  }
}

std::unique_ptr<Watch> LocalMetadataStore::watch(std::string prefix, Revision start_revision, WatchCallback cb) {
  if (start_revision > 0 && start_revision <= revision_) {
    // History from start_revision on, heard before watch() returns.
    if (start_revision <= compacted_) {
      cb(make_error_code(ClusterErrc::compacted), {});
      return std::make_unique<Watch>();
    }
    std::vector<WatchEvent> past;
    for (const auto& e : history_)
      if (e.kv.mod_revision >= start_revision && starts_with(e.kv.key, prefix)) past.push_back(e);
    if (!past.empty()) cb({}, past);
  }
  const uint64_t id = next_watcher_++;
  watchers_[id] = Watcher{std::move(prefix), std::move(cb)};
  return std::make_unique<WatchHandle>(this, id);
}

void LocalMetadataStore::arm(LeaseId id) {
  Lease& lease = leases_.at(id);
  lease.timer->expires_after(lease.ttl);
  lease.timer->async_wait([this, alive = std::weak_ptr<bool>(alive_), id](boost::system::error_code ec) {
    if (ec || !alive.lock()) return;
    expire(id);
  });
}

void LocalMetadataStore::expire(LeaseId id) {
  auto it = leases_.find(id);
  if (it == leases_.end()) return;
  Txn txn;
  for (const auto& k : it->second.keys) txn.ops.push_back(Op::erase(k));
  leases_.erase(it);
  if (txn.ops.empty()) return;
  auto deleting = [](LocalMetadataStore* self, Txn txn) -> awaitable<void> { (void)co_await self->commit(std::move(txn)); };
  asio::co_spawn(loop_, deleting(this, std::move(txn)), asio::detached);
}

awaitable<Result<LeaseId>> LocalMetadataStore::grant_lease(std::chrono::seconds ttl) {
  const LeaseId id{next_lease_++};
  leases_[id] = Lease{ttl, std::make_unique<asio::steady_timer>(loop_), {}};
  arm(id);
  co_return id;
}

awaitable<Result<std::chrono::seconds>> LocalMetadataStore::keep_alive(LeaseId lease) {
  auto it = leases_.find(lease);
  if (it == leases_.end()) co_return std::error_code(ClusterErrc::lease_not_found);
  arm(lease);
  co_return it->second.ttl;
}

awaitable<std::error_code> LocalMetadataStore::revoke_lease(LeaseId lease) {
  auto it = leases_.find(lease);
  if (it == leases_.end()) co_return std::error_code(ClusterErrc::lease_not_found);
  it->second.timer->cancel();
  Txn txn;
  for (const auto& k : it->second.keys) txn.ops.push_back(Op::erase(k));
  leases_.erase(it);
  if (!txn.ops.empty()) {
    auto r = co_await commit(std::move(txn));
    if (!r) co_return r.error();
  }
  co_return std::error_code();
}

}  // namespace runnel::cluster
