#include "cluster/etcd/etcd_metadata_store.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "cluster/errors.h"
#include "base/base64.h"

namespace runnel::cluster::etcd {

namespace json = boost::json;

namespace {
// Between a watch stream's failure and its resumption on the next endpoint.
constexpr auto kWatchRetry = std::chrono::milliseconds(200);

const json::array* array_field(const json::object& o, const char* name) {
  auto* v = o.if_contains(name);
  return v && v->is_array() ? &v->as_array() : nullptr;
}

int64_t header_revision(const json::object& o) {
  auto* h = o.if_contains("header");
  return h && h->is_object() ? int_field(h->as_object(), "revision") : 0;
}
}  // namespace

struct EtcdMetadataStore::WatchState {
  std::string prefix;  // relative
  Revision next_revision = 0;
  WatchCallback cb;
  std::shared_ptr<StreamControl> control = std::make_shared<StreamControl>();
  bool stopped = false;
};

class EtcdMetadataStore::WatchHandle final : public Watch {
 public:
  explicit WatchHandle(std::shared_ptr<WatchState> s) : state_(std::move(s)) {}
  ~WatchHandle() override {
    state_->stopped = true;
    state_->control->stop();
  }

 private:
  std::shared_ptr<WatchState> state_;
};

EtcdMetadataStore::EtcdMetadataStore(asio::any_io_executor ex, std::vector<Endpoint> endpoints, std::string root,
                                     std::chrono::milliseconds timeout)
    : ex_(ex), client_(ex, std::move(endpoints), timeout), root_(std::move(root)) {}

EtcdMetadataStore::~EtcdMetadataStore() = default;

Result<KeyValue> EtcdMetadataStore::key_value(const json::object& o) const {
  KeyValue kv;
  auto text = [&o](const char* name) -> std::optional<std::string> {
    auto* v = o.if_contains(name);
    if (!v) return std::string();
    if (!v->is_string()) return std::nullopt;
    return base64_decode(v->as_string());
  };
  auto key = text("key");
  auto value = text("value");
  if (!key || !value || key->compare(0, root_.size(), root_) != 0) return make_error_code(ClusterErrc::bad_response);
  kv.key = key->substr(root_.size());
  kv.value = std::move(*value);
  kv.create_revision = int_field(o, "create_revision");
  kv.mod_revision = int_field(o, "mod_revision");
  kv.lease = LeaseId(int_field(o, "lease"));
  return kv;
}

awaitable<Result<std::optional<KeyValue>>> EtcdMetadataStore::get(std::string key) {
  json::object request{{"key", base64_encode(root_ + key)}};
  auto r = co_await client_.call("/v3/kv/range", std::move(request));
  if (!r) co_return r.error();
  auto* kvs = array_field(*r, "kvs");
  if (!kvs || kvs->empty()) co_return std::optional<KeyValue>();
  if (!kvs->front().is_object()) co_return make_error_code(ClusterErrc::bad_response);
  auto kv = key_value(kvs->front().as_object());
  if (!kv) co_return kv.error();
  co_return std::optional<KeyValue>(std::move(*kv));
}

awaitable<Result<RangeResult>> EtcdMetadataStore::range(std::string prefix) {
  const std::string from = root_ + prefix;
  json::object request{{"key", base64_encode(from)}, {"range_end", base64_encode(prefix_end(from))}};
  auto r = co_await client_.call("/v3/kv/range", std::move(request));
  if (!r) co_return r.error();
  RangeResult out;
  out.revision = header_revision(*r);
  if (auto* kvs = array_field(*r, "kvs"))
    for (const auto& v : *kvs) {
      if (!v.is_object()) co_return make_error_code(ClusterErrc::bad_response);
      auto kv = key_value(v.as_object());
      if (!kv) co_return kv.error();
      out.kvs.push_back(std::move(*kv));
    }
  co_return out;
}

awaitable<Result<TxnResult>> EtcdMetadataStore::commit(Txn txn) {
  json::array compare, success, failure;
  for (const auto& c : txn.compares) {
    compare.push_back(json::object{{"key", base64_encode(root_ + c.key)},
                                   {"target", c.target == Compare::Target::mod ? "MOD" : "CREATE"},
                                   {"result", "EQUAL"},
                                   {c.target == Compare::Target::mod ? "mod_revision" : "create_revision",
                                    c.mod_revision}});
    failure.push_back(json::object{{"request_range", json::object{{"key", base64_encode(root_ + c.key)}}}});
  }
  for (const auto& op : txn.ops) {
    if (op.kind == Op::Kind::put) {
      json::object put{{"key", base64_encode(root_ + op.key)}, {"value", base64_encode(op.value)}};
      if (op.lease != kNoLease) put["lease"] = op.lease.value();
      success.push_back(json::object{{"request_put", std::move(put)}});
    } else if (op.kind == Op::Kind::erase) {
      success.push_back(json::object{{"request_delete_range", json::object{{"key", base64_encode(root_ + op.key)}}}});
    } else {
      success.push_back(json::object{{"request_delete_range",
                                      json::object{{"key", base64_encode(root_ + op.key)},
                                                   {"range_end", base64_encode(prefix_end(root_ + op.key))}}}});
    }
  }
  json::object request{{"compare", std::move(compare)}, {"success", std::move(success)}, {"failure", std::move(failure)}};
  auto r = co_await client_.call("/v3/kv/txn", std::move(request));
  if (!r) co_return r.error();
  TxnResult out;
  auto* ok = r->if_contains("succeeded");
  out.succeeded = ok && ok->is_bool() && ok->as_bool();
  out.revision = header_revision(*r);
  if (!out.succeeded)
    if (auto* responses = array_field(*r, "responses"))
      for (const auto& resp : *responses) {
        const json::object* range = nullptr;
        if (resp.is_object())
          if (auto* rr = resp.as_object().if_contains("response_range"); rr && rr->is_object()) range = &rr->as_object();
        if (!range) co_return make_error_code(ClusterErrc::bad_response);
        if (auto* kvs = array_field(*range, "kvs"))
          for (const auto& v : *kvs) {
            if (!v.is_object()) co_return make_error_code(ClusterErrc::bad_response);
            auto kv = key_value(v.as_object());
            if (!kv) co_return kv.error();
            out.current.push_back(std::move(*kv));
          }
      }
  co_return out;
}

std::unique_ptr<Watch> EtcdMetadataStore::watch(std::string prefix, Revision start_revision, WatchCallback cb) {
  auto state = std::make_shared<WatchState>();
  state->prefix = std::move(prefix);
  state->next_revision = start_revision;
  state->cb = std::move(cb);
  asio::co_spawn(ex_, run_watch(state), asio::detached);
  return std::make_unique<WatchHandle>(state);
}

awaitable<void> EtcdMetadataStore::run_watch(std::shared_ptr<WatchState> state) {
  const std::string from = root_ + state->prefix;
  asio::steady_timer pause(ex_);
  while (!state->stopped) {
    json::object create{{"key", base64_encode(from)}, {"range_end", base64_encode(prefix_end(from))}};
    if (state->next_revision > 0) create["start_revision"] = state->next_revision;
    std::error_code failure;
    auto on_message = [this, state, &failure](const json::object& m) {
      if (state->stopped) return false;
      if (int_field(m, "compact_revision") > 0) {
        failure = make_error_code(ClusterErrc::compacted);
        return false;
      }
      if (auto* c = m.if_contains("canceled"); c && c->is_bool() && c->as_bool()) {
        failure = make_error_code(ClusterErrc::bad_response);
        return false;
      }
      std::vector<WatchEvent> events;
      if (auto* list = array_field(m, "events"))
        for (const auto& e : *list) {
          if (!e.is_object()) continue;
          const auto& eo = e.as_object();
          auto* kvv = eo.if_contains("kv");
          if (!kvv || !kvv->is_object()) continue;
          auto kv = key_value(kvv->as_object());
          if (!kv) continue;
          auto* type = eo.if_contains("type");
          const bool erase = type && type->is_string() && type->as_string() == "DELETE";
          state->next_revision = std::max(state->next_revision, kv->mod_revision + 1);
          events.push_back({erase ? WatchEvent::Kind::erase : WatchEvent::Kind::put, std::move(*kv)});
        }
      if (state->next_revision == 0) {
        // Created "from now": resume after the revision the watch started at.
        if (auto rev = header_revision(m)) state->next_revision = rev + 1;
      }
      if (!events.empty()) state->cb({}, events);
      return !state->stopped;
    };
    json::object request{{"create_request", std::move(create)}};
    std::function<bool(const json::object&)> handler = on_message;
    auto ec = co_await client_.stream("/v3/watch", std::move(request), std::move(handler), state->control,
                                      /*untimed_after_first=*/true);
    if (state->stopped) co_return;
    if (!failure && ec == make_error_code(ClusterErrc::compacted)) failure = ec;
    if (failure) {
      state->cb(failure, {});
      co_return;
    }
    // The stream ended or its endpoint failed: resume on the next one.
    pause.expires_after(kWatchRetry);
    co_await pause.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

awaitable<Result<LeaseId>> EtcdMetadataStore::grant_lease(std::chrono::seconds ttl) {
  json::object request{{"TTL", ttl.count()}};
  auto r = co_await client_.call("/v3/lease/grant", std::move(request));
  if (!r) co_return r.error();
  const int64_t id = int_field(*r, "ID");
  if (id == 0) co_return make_error_code(ClusterErrc::bad_response);
  co_return LeaseId(id);
}

awaitable<Result<std::chrono::seconds>> EtcdMetadataStore::keep_alive(LeaseId lease) {
  // LeaseKeepAlive is a stream; one request gets one answer.
  int64_t ttl = -1;
  auto first = [&ttl](const json::object& m) {
    ttl = int_field(m, "TTL");
    return false;
  };
  json::object request{{"ID", lease.value()}};
  std::function<bool(const json::object&)> handler = first;
  auto control = std::make_shared<StreamControl>();
  auto ec = co_await client_.stream("/v3/lease/keepalive", std::move(request), std::move(handler), control,
                                    /*untimed_after_first=*/false);
  if (ec) co_return ec;
  if (ttl < 0) co_return make_error_code(ClusterErrc::bad_response);
  if (ttl == 0) co_return make_error_code(ClusterErrc::lease_not_found);  // expired: etcd answers TTL 0
  co_return std::chrono::seconds(ttl);
}

awaitable<std::error_code> EtcdMetadataStore::revoke_lease(LeaseId lease) {
  json::object request{{"ID", lease.value()}};
  auto r = co_await client_.call("/v3/lease/revoke", std::move(request));
  co_return r ? std::error_code() : r.error();
}

}  // namespace runnel::cluster::etcd
