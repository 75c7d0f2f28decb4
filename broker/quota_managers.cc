#include "broker/quota_managers.h"

#include <algorithm>

#include "broker/client_address.h"
#include "broker/logging.h"
#include "broker/timed_executor.h"
#include "cluster/etcd/key_layout.h"

namespace runnel::broker {

QuotaManagers::QuotaManagers(cluster::MetadataStore& store, const BrokerConfig& config)
    : config_(config),
      stored_(store, cluster::keys::kClientQuotas, "client quotas", &encode_client_quotas, &decode_client_quotas) {
  stored_.on_applied([this] {
    produce_.quotas_changed(stored_.value());
    fetch_.quotas_changed(stored_.value());
    request_.quotas_changed(stored_.value());
    index_ip_rates();
  });
}

int64_t QuotaManagers::now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void QuotaManagers::index_ip_rates() {
  ip_rates_.clear();
  default_ip_rate_.reset();
  for (const auto& [entity, values] : stored_.value()) {
    auto ip = entity.find(kIpEntity);
    auto rate = values.find(kConnectionCreationRate);
    if (ip == entity.end() || entity.size() != 1 || rate == values.end()) continue;
    if (!ip->second) {
      default_ip_rate_ = rate->second;
      continue;
    }
    error_code ec;
    const auto address = asio::ip::make_address(*ip->second, ec);
    if (ec) {
      RLOG_WARN("connection_creation_rate for ip %s: not an address, so no connection is held to it",
                ip->second->c_str());
      continue;
    }
    ip_rates_[java_host_address(address)] = rate->second;
  }
}

std::optional<double> QuotaManagers::connection_rate_for_ip(const std::string& address) const {
  if (auto it = ip_rates_.find(address); it != ip_rates_.end()) return it->second;
  return default_ip_rate_;
}

QuotaWindow QuotaManagers::window() const {
  return {config_.get_int("quota.window.num"), int64_t{config_.get_int("quota.window.size.seconds")} * 1000};
}

int64_t QuotaManagers::record_bytes(ClientQuotaManager& manager, const RequestContext& ctx, double bytes) {
  if (!manager.enabled()) return 0;
  return manager.record_and_get_throttle_ms(ctx.principal.name, ctx.client_id(), bytes, now_ms(), window());
}

void QuotaManagers::unrecord_bytes(ClientQuotaManager& manager, const RequestContext& ctx, double bytes) {
  if (!manager.enabled()) return;
  manager.unrecord(ctx.principal.name, ctx.client_id(), bytes, now_ms(), window());
}

int64_t QuotaManagers::record_request_time(const RequestContext& ctx) {
  if (!request_.enabled() || !ctx.thread_time) return 0;
  // Kafka's nanosToPercentage: a second of thread time is 100 (percent).
  const double percent = std::chrono::duration<double>(TimedExecutor::spent_so_far(*ctx.thread_time)).count() * 100.0;
  const QuotaWindow w = window();
  return request_.record_and_get_throttle_ms(ctx.principal.name, ctx.client_id(), percent, now_ms(), w, w.window_ms);
}

void QuotaManagers::throttle(ClientQuotaManager& manager, RequestContext& ctx, int64_t throttle_ms) {
  if (throttle_ms <= 0) return;
  manager.record_throttle(ctx.principal.name, ctx.client_id(), throttle_ms, now_ms(), window());
  const int64_t capped = std::min<int64_t>(throttle_ms, INT32_MAX);
  ctx.throttle_time_ms = std::max(ctx.throttle_time_ms, static_cast<int32_t>(capped));
}

void QuotaManagers::throttle_larger(ClientQuotaManager& bandwidth, RequestContext& ctx, int64_t bandwidth_ms,
                                    int64_t request_ms) {
  ctx.quotas_recorded = true;
  if (bandwidth_ms >= request_ms) throttle(bandwidth, ctx, bandwidth_ms);
  else throttle(request_, ctx, request_ms);
}

}  // namespace runnel::broker
