#include "broker/connection_quotas.h"

#include <algorithm>
#include <charconv>

#include "broker/client_address.h"
#include "broker/config_def.h"
#include "broker/logging.h"
#include "broker/security_config.h"

namespace runnel::broker {

namespace {

// Kafka's default for every limit here: Int.MaxValue, no limit.
constexpr int64_t kUnlimited = INT32_MAX;
// An acceptor waiting for a slot looks again this often even when nothing
// wakes it: a dynamic update may have raised the limit.
constexpr auto kSlotRecheck = std::chrono::milliseconds(200);

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Waiting {
  std::set<asio::steady_timer*>& set;
  asio::steady_timer* timer;
  Waiting(std::set<asio::steady_timer*>& s, asio::steady_timer* t) : set(s), timer(t) { set.insert(timer); }
  ~Waiting() { set.erase(timer); }
};

}  // namespace

void check_connection_quotas(const BrokerConfig& config) {
  const auto overrides = parse_connection_overrides(config.get_string("max.connections.per.ip.overrides"));
  // Kafka's KafkaConfig requirement, in its words.
  if (config.get_int("max.connections.per.ip") == 0 && overrides.empty())
    throw ConfigError("requirement failed: max.connections.per.ip can be set to zero only if "
                      "max.connections.per.ip.overrides property is set.");
}

std::map<std::string, int64_t> parse_connection_overrides(const std::string& value) {
  std::map<std::string, int64_t> out;
  for (const auto& entry : parse_list(value)) {
    const size_t colon = entry.rfind(':');
    int64_t count = -1;
    if (colon != std::string::npos && colon > 0) {
      const char* first = entry.data() + colon + 1;
      const char* last = entry.data() + entry.size();
      auto [p, ec] = std::from_chars(first, last, count);
      if (ec != std::errc() || p != last) count = -1;
    }
    if (count < 0)
      throw ConfigError("Invalid value " + value + " for configuration max.connections.per.ip.overrides: '" + entry +
                        "' is not host:count");
    const std::string host = entry.substr(0, colon);
    error_code ec;
    auto address = asio::ip::make_address(host, ec);
    if (!ec) {
      out[java_host_address(address)] = count;
      continue;
    }
    // A host name, as Kafka's InetAddress.getByName takes one.
    asio::io_context io;
    tcp::resolver resolver(io);
    auto results = resolver.resolve(host, "", ec);
    if (ec)
      throw ConfigError("Invalid value " + value + " for configuration max.connections.per.ip.overrides: " + host +
                        ": " + ec.message());
    for (const auto& r : results) out[java_host_address(r.endpoint().address())] = count;
  }
  return out;
}

ConnectionQuotas::Slot& ConnectionQuotas::Slot::operator=(Slot&& o) noexcept {
  if (this != &o) {
    reset();
    quotas_ = std::move(o.quotas_);
    o.quotas_ = nullptr;
    listener_ = std::move(o.listener_);
    address_ = std::move(o.address_);
  }
  return *this;
}

void ConnectionQuotas::Slot::reset() {
  if (!quotas_) return;
  auto quotas = std::move(quotas_);
  quotas_ = nullptr;
  quotas->release(*this);
}

bool ConnectionQuotas::is_inter_broker(const std::string& listener) const {
  // Kafka's protectedListener: only beside other listeners, so a broker
  // with one listener holds it to every limit.
  const auto& listeners = config_.listeners();
  if (listeners.size() < 2) return false;
  return inter_broker_listener(config_, listeners.front().name) == listener;
}

int64_t ConnectionQuotas::listener_value(const std::string& listener, const std::string& key) const {
  const std::string prefixed = "listener.name." + lower(listener) + "." + key;
  return config_.is_set(prefixed) ? config_.get_long(prefixed) : kUnlimited;
}

int64_t ConnectionQuotas::max_for_address(const std::string& address) {
  const std::string text = config_.get_string("max.connections.per.ip.overrides");
  if (text != overrides_text_) {
    // A dynamic update that does not parse keeps the overrides in force.
    try {
      overrides_ = parse_connection_overrides(text);
    } catch (const ConfigError& e) {
      RLOG_WARN("%s: the previous overrides stay in force", e.what());
    }
    overrides_text_ = text;
  }
  if (auto it = overrides_.find(address); it != overrides_.end()) return it->second;
  return config_.get_int("max.connections.per.ip");
}

CreationRate::Clock::duration CreationRate::take(int64_t rate, Clock::time_point now) {
  if (rate >= kUnlimited) return Clock::duration::zero();
  if (rate <= 0) return std::chrono::seconds(1);  // a rate of 0 admits nothing; look again later
  const double capacity = std::max<double>(1.0, static_cast<double>(rate));
  if (tokens_ < 0) {
    tokens_ = capacity;
  } else {
    const double elapsed = std::chrono::duration<double>(now - refilled_).count();
    tokens_ = std::min(capacity, tokens_ + std::max(0.0, elapsed) * static_cast<double>(rate));
  }
  refilled_ = now;
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return Clock::duration::zero();
  }
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>((1.0 - tokens_) / static_cast<double>(rate)));
}

bool ConnectionQuotas::over_broker_limit() const { return total_ > config_.get_int("max.connections"); }

awaitable<void> ConnectionQuotas::wait_to_accept(const std::string& listener) {
  const bool inter_broker = is_inter_broker(listener);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  // A slot first, as Kafka's acceptor waits for one before it accepts.
  for (;;) {
    const int64_t broker_max = config_.get_int("max.connections");
    const bool listener_full = per_listener_[listener] >= listener_value(listener, "max.connections");
    const bool at_broker_limit = total_ >= broker_max;
    if (!listener_full && (!at_broker_limit || inter_broker)) break;
    timer.expires_after(kSlotRecheck);
    Waiting waiting(waiting_, &timer);  // out of the set even if this frame is destroyed suspended
    co_await timer.async_wait(as_tuple_awaitable);
  }
  // Then the creation rates: the listener's, and the broker's for every
  // listener but the inter-broker one.
  for (;;) {
    const auto now = Clock::now();
    CreationRate& own = listener_rate_[listener];
    auto wait = own.take(listener_value(listener, "max.connection.creation.rate"), now);
    if (wait == Clock::duration::zero() && !inter_broker) {
      wait = broker_rate_.take(config_.get_int("max.connection.creation.rate"), now);
      if (wait != Clock::duration::zero()) own.give_back();  // not taken after all
    }
    if (wait == Clock::duration::zero()) co_return;
    timer.expires_after(wait);
    co_await timer.async_wait(as_tuple_awaitable);
  }
}

std::optional<int64_t> ConnectionQuotas::ip_throttle_ms(const std::string& listener, const std::string& address,
                                                        std::optional<double> rate, const QuotaWindow& w,
                                                        int64_t now_ms) {
  expire_idle_sensors(ip_rate_, last_ip_expiry_ms_, now_ms);
  if (!rate) return std::nullopt;
  IpRate& ip = ip_rate_[address];
  ip.last_recorded_ms = now_ms;
  ip.rate.record(1.0, now_ms, w);
  if (ip.rate.measure(now_ms, w) <= *rate) return std::nullopt;
  const int64_t throttle = std::min(ip.rate.throttle_ms(*rate, now_ms, w), w.window_ms);
  ip.rate.record(-1.0, now_ms, w);
  listener_rate_[listener].give_back();
  if (!is_inter_broker(listener)) broker_rate_.give_back();
  return throttle;
}

std::optional<ConnectionQuotas::Slot> ConnectionQuotas::admit(const std::string& listener, const std::string& address) {
  if (per_address_[address] >= max_for_address(address)) {
    if (per_address_[address] == 0) per_address_.erase(address);
    return std::nullopt;
  }
  ++per_address_[address];
  ++per_listener_[listener];
  ++total_;
  Slot slot;
  slot.quotas_ = shared_from_this();
  slot.listener_ = listener;
  slot.address_ = address;
  return slot;
}

void ConnectionQuotas::release(const Slot& slot) {
  if (auto it = per_address_.find(slot.address_); it != per_address_.end() && --it->second <= 0) per_address_.erase(it);
  --per_listener_[slot.listener_];
  --total_;
  for (auto* timer : waiting_) timer->cancel();  // the acceptors look again
}

}  // namespace runnel::broker
