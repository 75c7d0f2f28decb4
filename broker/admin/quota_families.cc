#include <string>

#include "broker/admin/metric_families.h"
#include "broker/broker.h"
#include "broker/quota_managers.h"

namespace runnel::broker::admin {

namespace {

// One quota kind's two families, as the JMX exporter renders Kafka's
// kafka.server:type=Produce|Fetch|Request,user=...,client-id=... beans:
// the measured rate and the average throttle time over the quota windows,
// one series a (user, client-id) sensor. Kafka tags a sensor with the
// names its quota level uses, "" for a level it does not, and so does
// Runnel. Sensors exist only while a quota of that kind does.
void quota_family(PrometheusText& out, ClientQuotaManager& manager, const QuotaWindow& w, const std::string& type,
                  const std::string& rate_attribute, const std::string& rate_help) {
  const auto measured = manager.measured(QuotaManagers::now_ms(), w);
  const std::string rate = "kafka_server_" + type + "_" + rate_attribute;
  const std::string throttle = "kafka_server_" + type + "_throttle_time";
  out.family(rate, "gauge", rate_help);
  for (const auto& m : measured) out.sample(rate, {{"user", m.user}, {"client_id", m.client_id}}, m.rate);
  out.family(throttle, "gauge", "Average throttle time given in ms over the quota windows");
  for (const auto& m : measured)
    out.sample(throttle, {{"user", m.user}, {"client_id", m.client_id}}, m.throttle_time_ms);
}

}  // namespace

void quota_families(PrometheusText& out, Broker& broker) {
  QuotaManagers& quotas = broker.quotas();
  const QuotaWindow w = quotas.window();
  quota_family(out, quotas.produce(), w, "produce", "byte_rate", "Produce bytes per second measured for the quota");
  quota_family(out, quotas.fetch(), w, "fetch", "byte_rate", "Fetch bytes per second measured for the quota");
  quota_family(out, quotas.request(), w, "request", "request_time",
               "Percent of a second's handler time measured for the quota");
}

}  // namespace runnel::broker::admin
