#include "broker/client_quota_manager.h"

#include <algorithm>

namespace runnel::broker {

const char* quota_key(QuotaType type) {
  switch (type) {
    case QuotaType::produce:
      return kProducerByteRate;
    case QuotaType::fetch:
      return kConsumerByteRate;
    case QuotaType::request:
      return kRequestPercentage;
  }
  return "";
}

void ClientQuotaManager::quotas_changed(const ClientQuotas& quotas) {
  bounds_.clear();
  const std::string key = quota_key(type_);
  for (const auto& [entity, values] : quotas) {
    if (entity.count(kIpEntity)) continue;
    if (auto v = values.find(key); v != values.end()) bounds_[entity] = v->second;
  }
}

std::optional<ClientQuotaManager::Applied> ClientQuotaManager::quota_for(const std::string& user,
                                                                         const std::string& client_id) const {
  if (bounds_.empty()) return std::nullopt;
  using Name = std::optional<std::string>;
  struct Candidate {
    ClientQuotaEntity entity;
    bool per_user;
    bool per_client;
  };
  const Name u = user, c = client_id, dflt = std::nullopt;
  const Candidate order[] = {
      {{{kUserEntity, u}, {kClientIdEntity, c}}, true, true},
      {{{kUserEntity, u}, {kClientIdEntity, dflt}}, true, true},
      {{{kUserEntity, u}}, true, false},
      {{{kUserEntity, dflt}, {kClientIdEntity, c}}, true, true},
      {{{kUserEntity, dflt}, {kClientIdEntity, dflt}}, true, true},
      {{{kUserEntity, dflt}}, true, false},
      {{{kClientIdEntity, c}}, false, true},
      {{{kClientIdEntity, dflt}}, false, true},
  };
  for (const auto& candidate : order) {
    auto it = bounds_.find(candidate.entity);
    if (it == bounds_.end()) continue;
    return Applied{it->second, candidate.per_user ? user : "", candidate.per_client ? client_id : ""};
  }
  return std::nullopt;
}

ClientQuotaManager::Sensor& ClientQuotaManager::sensor(const Applied& applied, int64_t now_ms) {
  expire_sensors(now_ms);
  Sensor& s = sensors_[{applied.user, applied.client_id}];
  s.last_recorded_ms = now_ms;
  return s;
}

void ClientQuotaManager::expire_sensors(int64_t now_ms) {
  expire_idle_sensors(sensors_, last_expiry_ms_, now_ms);
}

int64_t ClientQuotaManager::record_and_get_throttle_ms(const std::string& user, const std::string& client_id,
                                                       double value, int64_t now_ms, const QuotaWindow& w,
                                                       int64_t max_throttle_ms) {
  auto applied = quota_for(user, client_id);
  if (!applied) return 0;
  Sensor& s = sensor(*applied, now_ms);
  s.rate.record(value, now_ms, w);
  int64_t throttle = s.rate.throttle_ms(applied->bound, now_ms, w);
  if (max_throttle_ms > 0) throttle = std::min(throttle, max_throttle_ms);
  return std::max<int64_t>(0, throttle);
}

void ClientQuotaManager::unrecord(const std::string& user, const std::string& client_id, double value,
                                  int64_t now_ms, const QuotaWindow& w) {
  auto applied = quota_for(user, client_id);
  if (!applied) return;
  sensor(*applied, now_ms).rate.record(-value, now_ms, w);
}

void ClientQuotaManager::record_throttle(const std::string& user, const std::string& client_id,
                                         int64_t throttle_ms, int64_t now_ms, const QuotaWindow& w) {
  auto applied = quota_for(user, client_id);
  if (!applied) return;
  Sensor& s = sensor(*applied, now_ms);
  s.throttle_sum.record(static_cast<double>(throttle_ms), now_ms, w);
  s.throttle_count.record(1, now_ms, w);
}

std::optional<double> ClientQuotaManager::max_value_in_window(const std::string& user, const std::string& client_id,
                                                              const QuotaWindow& w) const {
  auto applied = quota_for(user, client_id);
  if (!applied) return std::nullopt;
  return applied->bound * (w.samples - 1) * (static_cast<double>(w.window_ms) / 1000.0);
}

std::vector<ClientQuotaManager::Measured> ClientQuotaManager::measured(int64_t now_ms, const QuotaWindow& w) {
  std::vector<Measured> out;
  out.reserve(sensors_.size());
  for (auto& [key, s] : sensors_) {
    // Both sums are over the same windows, so their ratio is the average throttle.
    const double count = s.throttle_count.measure(now_ms, w);
    const double average = count > 0 ? s.throttle_sum.measure(now_ms, w) / count : 0;
    out.push_back({key.first, key.second, s.rate.measure(now_ms, w), average});
  }
  return out;
}

}  // namespace runnel::broker
