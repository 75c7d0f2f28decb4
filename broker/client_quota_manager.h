// Kafka's ClientQuotaManager for one kind of client quota (produce bytes,
// fetch bytes, request time): which quota a (user, client id) pair is held
// to, the rate it is measured at, and how long it must wait when over.
//
// The quota that applies is the most specific entity that sets this kind's
// key, in Kafka's order (DefaultQuotaCallback):
//   1. user=U, client-id=C          5. user=<default>, client-id=<default>
//   2. user=U, client-id=<default>  6. user=<default>
//   3. user=U                       7. client-id=C
//   4. user=<default>, client-id=C  8. client-id=<default>
// and every pair it applies to shares one rate: entities 3 and 6 one per
// user, 7 and 8 one per client id, the others one per (user, client id), as
// Kafka tags its quota sensors. The user is the principal's name
// (ANONYMOUS on an unauthenticated listener), as Kafka's is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "broker/client_quota_entity.h"
#include "broker/quota_rate.h"

namespace runnel::broker {

enum class QuotaType { produce, fetch, request };

// The quota key each kind is set by (producer_byte_rate, ...).
const char* quota_key(QuotaType type);

class ClientQuotaManager {
 public:
  explicit ClientQuotaManager(QuotaType type) : type_(type) {}

  // Takes the entities that set this kind's key; called whenever the stored quotas change.
  void quotas_changed(const ClientQuotas& quotas);
  // Whether any entity sets this kind's key: when none does, nothing is measured.
  bool enabled() const { return !bounds_.empty(); }

  struct Applied {
    double bound = 0;
    std::string user;       // "" when the quota is per client id
    std::string client_id;  // "" when the quota is per user
  };
  std::optional<Applied> quota_for(const std::string& user, const std::string& client_id) const;

  // Records `value` and returns how long the client must wait (Kafka's
  // recordAndGetThrottleTimeMs), at most `max_throttle_ms` when that is
  // positive; 0 without a quota.
  int64_t record_and_get_throttle_ms(const std::string& user, const std::string& client_id, double value,
                                     int64_t now_ms, const QuotaWindow& w, int64_t max_throttle_ms = 0);
  // Takes back a value recorded for a response that was not sent (a
  // throttled fetch answers empty), as Kafka's unrecordQuotaSensor.
  void unrecord(const std::string& user, const std::string& client_id, double value, int64_t now_ms,
                const QuotaWindow& w);
  // Counts a throttle the client was given, for the throttle-time metric.
  void record_throttle(const std::string& user, const std::string& client_id, int64_t throttle_ms, int64_t now_ms,
                       const QuotaWindow& w);
  // The most a fetch may carry: quota.window.num - 1 windows' worth, as
  // Kafka's getMaxValueInQuotaWindow; nullopt without a quota.
  std::optional<double> max_value_in_window(const std::string& user, const std::string& client_id,
                                            const QuotaWindow& w) const;

  // One measured rate, for the metrics (Kafka's byte-rate / request-time
  // and throttle-time of kafka.server:type=Produce|Fetch|Request).
  struct Measured {
    std::string user;
    std::string client_id;
    double rate = 0;
    double throttle_time_ms = 0;  // the average throttle given over the windows
  };
  std::vector<Measured> measured(int64_t now_ms, const QuotaWindow& w);

 private:
  struct Sensor {
    QuotaRate rate;
    QuotaRate throttle_sum;
    QuotaRate throttle_count;
    int64_t last_recorded_ms = 0;
  };
  using SensorKey = std::pair<std::string, std::string>;  // (user, client id) tags
  Sensor& sensor(const Applied& applied, int64_t now_ms);
  // Kafka drops a quota sensor inactive for an hour.
  void expire_sensors(int64_t now_ms);

  QuotaType type_;
  std::map<ClientQuotaEntity, double> bounds_;  // the entities that set this kind's key
  std::map<SensorKey, Sensor> sensors_;
  int64_t last_expiry_ms_ = 0;
};

}  // namespace runnel::broker
