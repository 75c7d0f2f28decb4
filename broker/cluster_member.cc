#include "broker/cluster_member.h"

#include <algorithm>

#include "broker/logging.h"
#include "cluster/etcd/key_layout.h"

namespace runnel::broker {

namespace {

// How long a failed load waits before the next attempt.
constexpr std::chrono::milliseconds kReloadBackoff{500};

void warn(const std::string& what) { RLOG_WARN("%s", what.c_str()); }

using ValueChanged = std::function<void(const std::optional<std::string>& value, int64_t revision)>;

// One whole-value key's hook from a full load: its value, or absent as of the load.
void heard_loaded(const ValueChanged& hook, const char* key, const cluster::RangeResult& everything) {
  if (!hook) return;
  auto kv = std::find_if(everything.kvs.begin(), everything.kvs.end(),
                         [key](const cluster::KeyValue& kv) { return kv.key == key; });
  if (kv == everything.kvs.end()) hook(std::nullopt, everything.revision);
  else hook(kv->value, kv->mod_revision);
}

// The same hook from the watch's events.
void heard_watched(const ValueChanged& hook, const char* key, const std::vector<cluster::WatchEvent>& events) {
  if (!hook) return;
  for (const auto& e : events)
    if (e.kv.key == key)
      hook(e.kind == cluster::WatchEvent::Kind::put ? std::optional(e.kv.value) : std::nullopt, e.kv.mod_revision);
}

}  // namespace

ClusterMember::ClusterMember(cluster::MetadataStore& store, cluster::MetadataCache& cache, std::string cluster_id,
                             NodeId self, ClusterMemberOptions options, ClusterMemberHooks hooks)
    : store_(store),
      cache_(cache),
      self_(self),
      options_(options),
      hooks_(std::move(hooks)),
      loader_(std::move(cluster_id), self, warn),
      election_(
          store, self,
          [this](cluster::Revision revision) {
            RLOG_INFO("this broker (node %d) is now the controller (election revision %lld)", self_.value(),
                      static_cast<long long>(revision));
            controller_.on_image(cache_.image());
          },
          [this] { RLOG_INFO("this broker (node %d) is no longer the controller", self_.value()); }),
      controller_(store, election_, options.controller, warn) {
  cache_.subscribe([this](const cluster::MetadataDelta& d) { controller_.on_image(d.after()); });
}

ClusterMember::~ClusterMember() {
  *alive_ = false;
  watch_.reset();
  election_.stop();
}

awaitable<std::error_code> ClusterMember::start(cluster::BrokerRegistration self, std::chrono::milliseconds limit) {
  if (auto ec = co_await load_and_watch()) co_return ec;
  registry_ = std::make_unique<cluster::BrokerRegistry>(store_, std::move(self), options_.registry);
  auto on_lost = [this] {
    RLOG_WARN("node %d: the broker session may have lapsed: no longer leading, registering again", self_.value());
    election_.stop();
    if (hooks_.fenced) hooks_.fenced();
  };
  auto on_registered = [this, last = int64_t{0}](int64_t epoch) mutable {
    if (epoch == last)
      RLOG_INFO("node %d resumed its session in the cluster (broker epoch %lld)", self_.value(),
                static_cast<long long>(epoch));
    else
      RLOG_INFO("node %d registered in the cluster (broker epoch %lld)", self_.value(), static_cast<long long>(epoch));
    last = epoch;
    election_.start(registry_->lease());
    asio::co_spawn(store_.get_executor(), unfence_when_current(epoch, alive_), asio::detached);
  };
  co_return co_await registry_->start(limit, std::move(on_lost), std::move(on_registered));
}

awaitable<void> ClusterMember::unfence_when_current(int64_t epoch, std::shared_ptr<bool> alive) {
  // Lead again only once the image is as new as the registration: a new
  // registration follows a gap in which the controller may have moved this
  // broker's leaderships elsewhere, and an image from before it still names
  // this broker their leader. (A resumed one had no gap: its key, and so
  // its leaderships, stayed.)
  std::function<bool()> current = [this, alive, epoch] { return !*alive || cache_.image()->revision() >= epoch; };
  const bool seen = co_await poll_until(std::move(current), std::chrono::milliseconds(10), options_.registry.session_timeout);
  if (!*alive || !registry_ || registry_->epoch() != epoch || !registry_->registered()) co_return;
  if (!seen) {
    // The watch is behind by a whole session: what this broker would lead
    // is unknown; try again from the top (the registry stays as it is).
    RLOG_WARN("node %d: the metadata image has not reached registration revision %lld; still fenced", self_.value(),
              static_cast<long long>(epoch));
    asio::co_spawn(store_.get_executor(), unfence_when_current(epoch, alive), asio::detached);
    co_return;
  }
  if (hooks_.registered) hooks_.registered();
}

namespace {

// Partitions this broker leads that another live ISR member could lead.
size_t movable_leaderships(const cluster::MetadataImage& image, NodeId self) {
  size_t n = 0;
  for (const auto& [name, topic] : image.topics())
    for (const auto& p : topic->partitions)
      if (p.leader == self &&
          std::any_of(p.isr.begin(), p.isr.end(), [&](NodeId r) { return r != self && image.is_live(r); }))
        ++n;
  return n;
}

}  // namespace

awaitable<void> ClusterMember::hand_over_leadership(std::chrono::milliseconds limit) {
  if (!registry_) co_return;
  if (auto ec = co_await registry_->fence_for_shutdown()) {
    RLOG_WARN("controlled shutdown: cannot fence this broker's registration (%s)", ec.message().c_str());
    co_return;
  }
  RLOG_INFO("controlled shutdown: handing over %zu leadership(s)", movable_leaderships(*cache_.image(), self_));
  std::function<bool()> handed_over = [this] { return movable_leaderships(*cache_.image(), self_) == 0; };
  if (!co_await poll_until(std::move(handed_over), std::chrono::milliseconds(20), limit))
    RLOG_WARN("controlled shutdown: %zu leadership(s) not handed over in time",
              movable_leaderships(*cache_.image(), self_));
}

awaitable<void> ClusterMember::leave() {
  *alive_ = false;
  election_.stop();
  if (registry_)
    if (auto ec = co_await registry_->stop())
      RLOG_WARN("leaving the cluster: %s (the session expires by itself)", ec.message().c_str());
  watch_.reset();
}

awaitable<std::error_code> ClusterMember::load_and_watch() {
  auto everything = co_await store_.range("");
  if (!everything) co_return everything.error();
  heard_loaded(hooks_.acls_changed, cluster::keys::kAcls, *everything);
  heard_loaded(hooks_.scram_credentials_changed, cluster::keys::kScramCredentials, *everything);
  heard_loaded(hooks_.client_quotas_changed, cluster::keys::kClientQuotas, *everything);
  cache_.publish(loader_.load(*everything));
  watch_ = store_.watch("", everything->revision + 1,
                        [this, alive = alive_](std::error_code ec, const std::vector<cluster::WatchEvent>& events) {
                          if (*alive) on_watch(ec, events);
                        });
  co_return std::error_code{};
}

void ClusterMember::on_watch(std::error_code ec, const std::vector<cluster::WatchEvent>& events) {
  if (ec) {
    RLOG_WARN("the metadata watch ended (%s): loading the metadata again", ec.message().c_str());
    asio::co_spawn(store_.get_executor(), reload_after_watch_ended(alive_), asio::detached);
    return;
  }
  if (hooks_.config_changed)
    for (const auto& e : events)
      if (e.kv.key.rfind(cluster::keys::kBrokerConfigsPrefix, 0) == 0)
        hooks_.config_changed(e.kv.key, e.kind == cluster::WatchEvent::Kind::put ? std::optional(e.kv.value)
                                                                                 : std::nullopt);
  heard_watched(hooks_.acls_changed, cluster::keys::kAcls, events);
  heard_watched(hooks_.scram_credentials_changed, cluster::keys::kScramCredentials, events);
  heard_watched(hooks_.client_quotas_changed, cluster::keys::kClientQuotas, events);
  cache_.publish(loader_.apply(events));
}

awaitable<void> ClusterMember::reload_after_watch_ended(std::shared_ptr<bool> alive) {
  asio::steady_timer timer(store_.get_executor());
  while (*alive) {
    if (!co_await load_and_watch()) co_return;
    timer.expires_after(kReloadBackoff);
    co_await timer.async_wait(as_tuple_awaitable);
  }
}

}  // namespace runnel::broker
