#include "cli/client_config.h"

#include <cstdlib>
#include <set>

#include "cli/kafka_errors.h"

namespace runnel::cli {

namespace {

// The -X keys something in the CLI reads; Kafka's names and meanings.
const std::set<std::string> kKnownKeys = {
    "client.id",          "request.timeout.ms", "socket.connection.setup.timeout.ms", "retries",
    "retry.backoff.ms",   "linger.ms",          "batch.size",                         "acks",
    "enable.idempotence", "compression.type",   "fetch.max.wait.ms",                  "fetch.min.bytes",
    "fetch.max.bytes",    "max.partition.fetch.bytes", "session.timeout.ms",         "heartbeat.interval.ms",
    "max.poll.interval.ms", "auto.offset.reset", "enable.auto.commit",               "auto.commit.interval.ms",
    "isolation.level",    "max.in.flight.requests.per.connection", "delivery.timeout.ms",
    // client_security.h
    "security.protocol", "sasl.mechanism", "sasl.mechanisms", "sasl.username", "sasl.password", "ssl.ca.location",
    "ssl.certificate.location", "ssl.key.location", "ssl.key.password", "ssl.endpoint.identification.algorithm"};

}  // namespace

std::vector<HostPort> parse_broker_list(const std::string& text) {
  std::vector<HostPort> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    start = comma == std::string::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    auto colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size())
      throw UsageError("a broker is HOST:PORT, got '" + item + "'");
    std::string host = item.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    int64_t port = parse_int(item.substr(colon + 1), "the port of '" + item + "'");
    if (port < 1 || port > 65535) throw UsageError("port out of range in '" + item + "'");
    out.push_back({host, static_cast<uint16_t>(port)});
  }
  if (out.empty()) throw UsageError("no bootstrap broker given");
  return out;
}

ClientConfig ClientConfig::from(const ParsedArgs& args) {
  ClientConfig c;
  std::string brokers = args.get("brokers");
  if (brokers.empty()) {
    const char* env = std::getenv("RUNNEL_BROKERS");
    brokers = env && *env ? env : "127.0.0.1:9092";
  }
  c.bootstrap_ = parse_broker_list(brokers);
  for (const auto& kv : args.all("config")) {
    auto [k, v] = split_key_value(kv, "-X");
    if (!kKnownKeys.count(k)) throw UsageError("-X " + k + ": not a client config this CLI acts on");
    c.values_[k] = v;
  }
  c.client_id_ = c.get("client.id", c.client_id_);
  return c;
}

std::string ClientConfig::get(const std::string& key, const std::string& fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

int64_t ClientConfig::int_or(const std::string& key, int64_t fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : parse_int(it->second, "-X " + key);
}

}  // namespace runnel::cli
