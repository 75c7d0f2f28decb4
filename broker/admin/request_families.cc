#include <string>

#include "broker/admin/metric_families.h"
#include "broker/api_registry.h"
#include "broker/broker.h"
#include "protocol/error_codes.h"

namespace runnel::broker::admin {

namespace {

// Each served API key with the versions the tables can hold.
template <typename F>
void for_each_served(F&& f) {
  for (int16_t key = 0; key < RequestCounters::kApiKeys; ++key)
    if (const ApiRoute* route = find_route(key)) f(key, *route);
}

void requests(PrometheusText& out, Broker& broker) {
  const char* name = "kafka_network_requestmetrics_requests_total";
  out.family(name, "counter", "Requests read, by API and version (Kafka's RequestsPerSec)");
  const RequestCounters& counters = broker.request_counters();
  for_each_served([&](int16_t key, const ApiRoute& route) {
    for (int16_t v = 0; v < RequestCounters::kVersions; ++v)
      if (uint64_t n = counters.get(key, v)) {
        const std::string version = std::to_string(v);
        out.sample(name, {{"request", route.name}, {"version", version}}, n);
      }
  });
}

void errors(PrometheusText& out, Broker& broker) {
  const char* name = "kafka_network_requestmetrics_errors_total";
  out.family(name, "counter",
             "Error codes in responses, NONE included, by API (Kafka's ErrorsPerSec: one per partition "
             "for Produce and Fetch)");
  const ErrorCounters& counters = broker.error_counters();
  for_each_served([&](int16_t key, const ApiRoute& route) {
    for (int16_t code = -1; code <= ErrorCounters::kMaxError; ++code)
      if (uint64_t n = counters.get(key, code)) {
        const char* known = protocol::error_name(static_cast<protocol::ErrorCode>(code));
        const std::string error = known ? known : "UNKNOWN_CODE_" + std::to_string(code);
        out.sample(name, {{"request", route.name}, {"error", error}}, n);
      }
  });
}

void times(PrometheusText& out, Broker& broker) {
  const char* name = "kafka_network_requestmetrics_totaltimems";
  out.family(name, "histogram",
             "Milliseconds from a request's last byte read to its response's last byte written, by API and "
             "version (Kafka's TotalTimeMs)");
  const RequestTimes& times = broker.request_times();
  for_each_served([&](int16_t key, const ApiRoute& route) {
    for (int16_t v = 0; v < RequestTimes::kVersions; ++v) {
      const Histogram* h = times.get(key, v);
      if (!h || h->count(RequestTimes::kBucketsMs) == 0) continue;
      const std::string version = std::to_string(v);
      out.histogram(name, {{"request", route.name}, {"version", version}}, *h, RequestTimes::kBucketsMs);
    }
  });
}

void in_flight(PrometheusText& out, Broker& broker) {
  const char* queue = "kafka_network_requestchannel_requestqueuesize";
  out.family(queue, "gauge",
             "Requests read and not yet answered, over every connection (Runnel has no handler queue: each "
             "request runs as it arrives, so this is Kafka's queue and its handlers together)");
  out.sample(queue, {}, static_cast<uint64_t>(broker.requests_in_flight()));
  const char* used = "kafka_network_socketserver_memorypoolused";
  out.family(used, "gauge", "Bytes of requests read and not yet done with (queued.max.request.bytes bounds them)");
  out.sample(used, {}, static_cast<uint64_t>(broker.request_memory().in_use()));
}

}  // namespace

void request_families(PrometheusText& out, Broker& broker) {
  requests(out, broker);
  errors(out, broker);
  times(out, broker);
  in_flight(out, broker);
}

}  // namespace runnel::broker::admin
