// The client-quota rate and its throttle time, as Kafka's Rate and
// QuotaUtils.throttleTime compute them, and which quota entity applies to
// a (user, client id) pair in Kafka's order of precedence.
#include <catch2/catch.hpp>

#include "broker/client_quota_manager.h"
#include "broker/quota_rate.h"

using namespace runnel::broker;

TEST_CASE("a quota rate is measured over at least quota.window.num - 1 whole windows", "[quotas]") {
  const QuotaWindow w{11, 1000};
  QuotaRate rate;
  rate.record(20000, 0, w);
  // One sample, just begun: counted as 10 whole windows.
  CHECK(rate.window_size_ms(0, w) == 10000);
  CHECK(rate.measure(0, w) == Approx(2000));
  // 1,000 bytes/s allowed: 20,000 bytes over 10 s is 1,000 over, which
  // takes 10 s more to come down to the bound.
  CHECK(rate.throttle_ms(1000, 0, w) == 10000);
  CHECK(rate.throttle_ms(2000, 0, w) == 0);
  // A later sample; at 15 s the first (older than all 11 windows) is forgotten.
  rate.record(500, 5500, w);
  CHECK(rate.measure(5500, w) == Approx(20500.0 / 10.5));  // 5.5 s elapsed, counted as 10.5
  CHECK(rate.measure(15000, w) == Approx(500.0 / 10.5));
}

TEST_CASE("a quota rate beyond its windows counts the time actually elapsed", "[quotas]") {
  const QuotaWindow w{3, 1000};
  QuotaRate rate;
  rate.record(1000, 0, w);
  rate.record(1000, 1000, w);
  rate.record(1000, 2000, w);
  // Three samples starting at 0, 1000 and 2000 ms; 2500 ms elapsed since the oldest.
  CHECK(rate.window_size_ms(2500, w) == 2500);
  CHECK(rate.measure(2500, w) == Approx(3000 / 2.5));
  // A taken-back value (a throttled fetch) lowers the rate again.
  rate.record(-1000, 2500, w);
  CHECK(rate.measure(2500, w) == Approx(2000 / 2.5));
}

TEST_CASE("the most specific quota entity applies, with Kafka's sensor sharing", "[quotas]") {
  ClientQuotas quotas;
  const std::optional<std::string> dflt;
  quotas[{{kClientIdEntity, dflt}}][kProducerByteRate] = 8;
  ClientQuotaManager m(QuotaType::produce);
  m.quotas_changed(quotas);
  auto applied = m.quota_for("alice", "app");
  REQUIRE(applied);
  CHECK(applied->bound == 8);
  CHECK(applied->user.empty());  // per client id
  CHECK(applied->client_id == "app");

  quotas[{{kClientIdEntity, std::string("app")}}][kProducerByteRate] = 7;
  quotas[{{kUserEntity, dflt}}][kProducerByteRate] = 6;
  quotas[{{kUserEntity, dflt}, {kClientIdEntity, dflt}}][kProducerByteRate] = 5;
  quotas[{{kUserEntity, dflt}, {kClientIdEntity, std::string("app")}}][kProducerByteRate] = 4;
  quotas[{{kUserEntity, std::string("alice")}}][kProducerByteRate] = 3;
  quotas[{{kUserEntity, std::string("alice")}, {kClientIdEntity, dflt}}][kProducerByteRate] = 2;
  quotas[{{kUserEntity, std::string("alice")}, {kClientIdEntity, std::string("app")}}][kProducerByteRate] = 1;
  // Another kind's key does not count for this one.
  quotas[{{kUserEntity, std::string("bob")}}][kConsumerByteRate] = 100;
  m.quotas_changed(quotas);
  CHECK(m.quota_for("alice", "app")->bound == 1);
  CHECK(m.quota_for("alice", "other")->bound == 2);
  CHECK(m.quota_for("bob", "app")->bound == 4);
  CHECK(m.quota_for("bob", "other")->bound == 5);
  quotas.erase({{kUserEntity, std::string("alice")}, {kClientIdEntity, dflt}});
  quotas.erase({{kUserEntity, dflt}, {kClientIdEntity, dflt}});
  m.quotas_changed(quotas);
  auto per_user = m.quota_for("alice", "other");
  CHECK(per_user->bound == 3);
  CHECK(per_user->user == "alice");
  CHECK(per_user->client_id.empty());  // every client id of alice shares it
  CHECK(m.quota_for("bob", "other")->bound == 6);

  ClientQuotaManager none(QuotaType::produce);
  none.quotas_changed({});
  CHECK_FALSE(none.enabled());
  CHECK(none.record_and_get_throttle_ms("alice", "app", 1e12, 0, QuotaWindow{}) == 0);
}

TEST_CASE("two clients under one default quota are measured apart", "[quotas]") {
  ClientQuotas quotas;
  quotas[{{kClientIdEntity, std::nullopt}}][kProducerByteRate] = 1000;
  ClientQuotaManager m(QuotaType::produce);
  m.quotas_changed(quotas);
  const QuotaWindow w;
  CHECK(m.record_and_get_throttle_ms("", "noisy", 50000, 0, w) > 0);
  CHECK(m.record_and_get_throttle_ms("", "quiet", 5000, 0, w) == 0);
  // The request quota's throttle is capped at one window.
  ClientQuotas requests;
  requests[{{kUserEntity, std::nullopt}}][kRequestPercentage] = 1;
  ClientQuotaManager r(QuotaType::request);
  r.quotas_changed(requests);
  CHECK(r.record_and_get_throttle_ms("alice", "x", 1000, 0, w, w.window_ms) == w.window_ms);
}
