// Kafka's SocketServer.ConnectionQuotas: how many connections the Kafka
// listeners hold, and how fast they may open.
//
//   max.connections                 broker-wide, and per listener as
//                                   listener.name.<l>.max.connections: the
//                                   acceptor waits for a slot (the connection
//                                   stays in the listen backlog), as Kafka's
//                                   Acceptor waits in waitForConnectionSlot.
//                                   The inter-broker listener is held only to
//                                   its own limit: at the broker-wide limit it
//                                   closes the least recently active
//                                   connection of another listener, as Kafka
//                                   does, so replication is never locked out.
//   max.connections.per.ip          and max.connections.per.ip.overrides
//                                   (host:count,...): the connection is
//                                   accepted and closed at once, as Kafka's
//                                   TooManyConnectionsException closes it.
//   max.connection.creation.rate    broker-wide (not the inter-broker
//                                   listener) and per listener: accepts beyond
//                                   the rate wait, as Kafka's acceptor blocks
//                                   for the throttle time. Kafka measures the
//                                   rate over its quota windows; here a token
//                                   bucket refilled at the rate, holding one
//                                   second's worth, gives the same sustained
//                                   rate with a burst of at most one second.
//
// Values are read from the broker's config at each accept, so a dynamic
// update (kafka-configs --entity-type brokers --entity-default) applies to
// the next one.
//
//   connection_creation_rate        of the ip client quota entity (KIP-612;
//                                   kafka-configs --entity-type ips), on every
//                                   listener: measured with Kafka's windowed
//                                   rate per address; a connection over it is
//                                   not counted and is closed once the throttle
//                                   time (at most one quota window) has
//                                   passed, as Kafka's acceptor delays closing
//                                   a throttled socket.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "broker/asio.h"
#include "broker/config.h"
#include "broker/quota_rate.h"

namespace runnel::broker {

// max.connection.creation.rate as a token bucket refilled at the rate and
// holding one second's worth (at least one connection).
class CreationRate {
 public:
  using Clock = std::chrono::steady_clock;
  // Takes a token at `rate` per second: zero when one was there, else how
  // long until one will be (nothing is taken then). A rate at or above
  // Int.MaxValue is no limit.
  Clock::duration take(int64_t rate, Clock::time_point now);
  // Gives back a token taken when another limit then refused the connection.
  void give_back() {
    if (tokens_ >= 0) tokens_ += 1.0;
  }

 private:
  double tokens_ = -1;  // < 0: not started (full on first use)
  Clock::time_point refilled_{};
};

class ConnectionQuotas : public std::enable_shared_from_this<ConnectionQuotas> {
 public:
  using Clock = std::chrono::steady_clock;

  // A connection counted against the quotas; released (and a waiting
  // acceptor woken) when destroyed or reset.
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& o) noexcept { *this = std::move(o); }
    Slot& operator=(Slot&& o) noexcept;
    ~Slot() { reset(); }
    void reset();

   private:
    friend class ConnectionQuotas;
    std::shared_ptr<ConnectionQuotas> quotas_;  // outlives the Server while connections drain
    std::string listener_;
    std::string address_;
  };

  explicit ConnectionQuotas(const BrokerConfig& config) : config_(config) {}

  // Returns once `listener` may accept another connection: a slot under
  // max.connections and the rate within max.connection.creation.rate.
  awaitable<void> wait_to_accept(const std::string& listener);

  // Counts an accepted connection from `address`; nullopt when that
  // address already has its max.connections.per.ip (close it).
  std::optional<Slot> admit(const std::string& listener, const std::string& address);

  // Kafka's recordIpConnectionMaybeThrottle: records a connection from
  // `address` against its ip quota `rate` (nullopt: none). Over it, the
  // connection is taken back from the address's rate and from the
  // listener's and broker's creation rates, and the time to hold it before
  // closing it is returned; nullopt when it may be admitted.
  std::optional<int64_t> ip_throttle_ms(const std::string& listener, const std::string& address,
                                        std::optional<double> rate, const QuotaWindow& w, int64_t now_ms);

  // The most connections `address` may hold, and the limit it was given as.
  int64_t max_for_address(const std::string& address);
  bool is_inter_broker(const std::string& listener) const;
  // More connections than max.connections: the inter-broker listener took
  // one past it, and a connection elsewhere must go.
  bool over_broker_limit() const;

 private:
  int64_t listener_value(const std::string& listener, const std::string& key) const;
  void release(const Slot& slot);

  const BrokerConfig& config_;
  std::set<asio::steady_timer*> waiting_;  // acceptors waiting for a slot, woken when one is released
  std::map<std::string, int64_t> per_listener_;
  std::map<std::string, int64_t> per_address_;
  int64_t total_ = 0;
  CreationRate broker_rate_;
  std::map<std::string, CreationRate> listener_rate_;
  struct IpRate {
    QuotaRate rate;
    int64_t last_recorded_ms = 0;
  };
  std::map<std::string, IpRate> ip_rate_;
  int64_t last_ip_expiry_ms_ = 0;
  std::string overrides_text_;  // the max.connections.per.ip.overrides value parsed into overrides_
  std::map<std::string, int64_t> overrides_;
};

// Kafka's startup checks of these configs; throws ConfigError.
void check_connection_quotas(const BrokerConfig& config);

// max.connections.per.ip.overrides: "host:count,...", each host an IP
// address or a name resolved to its addresses now. Throws ConfigError
// with Kafka's message for a malformed entry.
std::map<std::string, int64_t> parse_connection_overrides(const std::string& value);

}  // namespace runnel::broker
