// Kafka's QuotaManagers: the client quotas (AlterClientQuotas, stored as
// broker/stored_document.h keeps a document) and the managers that hold
// each request to them (broker/client_quota_manager.h):
//   produce  producer_byte_rate: a Produce's request bytes;
//   fetch    consumer_byte_rate: a consumer Fetch's response bytes (a
//            throttled fetch answers empty and its bytes are taken back);
//   request  request_percentage: the time a request held the event loop
//            (broker/timed_executor.h), as a percentage of one thread.
// A request over a quota is answered at once with throttle_time_ms, and
// its connection reads nothing more until that time has passed (KIP-219:
// Kafka mutes the channel); a well-behaved client also waits on its side.
// Only the clients over their quota wait: the measured rates are per user
// and client id. Followers' fetches and WriteTxnMarkers are exempt, as
// Kafka's cluster actions are.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "broker/client_quota_entity.h"
#include "broker/client_quota_manager.h"
#include "broker/config.h"
#include "broker/request_context.h"
#include "broker/stored_document.h"

namespace runnel::broker {

class QuotaManagers {
 public:
  QuotaManagers(cluster::MetadataStore& store, const BrokerConfig& config);

  StoredDocument<ClientQuotas>& stored() { return stored_; }
  const ClientQuotas& quotas() const { return stored_.value(); }

  ClientQuotaManager& produce() { return produce_; }
  ClientQuotaManager& fetch() { return fetch_; }
  ClientQuotaManager& request() { return request_; }
  QuotaWindow window() const;

  // Whether request time must be measured (a request_percentage quota exists).
  bool measure_request_time() const { return request_.enabled(); }

  // Records `bytes` against the produce or fetch quota of the request's
  // client; the throttle time, 0 when under it (or without one).
  int64_t record_bytes(ClientQuotaManager& manager, const RequestContext& ctx, double bytes);
  void unrecord_bytes(ClientQuotaManager& manager, const RequestContext& ctx, double bytes);
  // Records the request's thread time against the request quota; its
  // throttle time, at most one window (Kafka's ClientRequestQuotaManager).
  int64_t record_request_time(const RequestContext& ctx);
  // Gives the request `throttle_ms` (the larger of its bandwidth and
  // request throttles, counted against the manager it came from): the
  // response carries it and the connection waits it out.
  void throttle(ClientQuotaManager& manager, RequestContext& ctx, int64_t throttle_ms);
  // A Produce or Fetch: the larger of its bandwidth and request throttles,
  // counted against the quota it came from, as Kafka's KafkaApis does; the
  // request's own quotas are then recorded (ctx.quotas_recorded).
  void throttle_larger(ClientQuotaManager& bandwidth, RequestContext& ctx, int64_t bandwidth_ms, int64_t request_ms);

  // The ip entity's connection_creation_rate for a client address (as
  // java_host_address writes it), Kafka's connectionRateForIp: the
  // address's own quota, else the default ip's; nullopt when neither is set.
  // An entity named by a host name rather than an address applies to no
  // connection (logged when stored): Kafka resolves it when the quota
  // changes, which Runnel would do on its event loop.
  std::optional<double> connection_rate_for_ip(const std::string& address) const;

  static int64_t now_ms();

 private:
  void index_ip_rates();

  const BrokerConfig& config_;
  StoredDocument<ClientQuotas> stored_;
  ClientQuotaManager produce_{QuotaType::produce};
  ClientQuotaManager fetch_{QuotaType::fetch};
  ClientQuotaManager request_{QuotaType::request};
  std::map<std::string, double> ip_rates_;  // by java_host_address
  std::optional<double> default_ip_rate_;
};

}  // namespace runnel::broker
