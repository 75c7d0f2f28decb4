// What every client command shares: the bootstrap servers (-b, else
// RUNNEL_BROKERS, else 127.0.0.1:9092) and client configs passed with
// -X key=value, under Kafka's own config names. A key the CLI does not act
// on is a usage error rather than silently ignored.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/args.h"

namespace runnel::cli {

struct HostPort {
  std::string host;
  uint16_t port = 0;
};

class ClientConfig {
 public:
  // From the common options of `args` (brokers, config).
  static ClientConfig from(const ParsedArgs& args);

  const std::vector<HostPort>& bootstrap() const { return bootstrap_; }
  const std::string& client_id() const { return client_id_; }
  std::chrono::milliseconds request_timeout() const { return std::chrono::milliseconds(int_or("request.timeout.ms", 30000)); }
  std::chrono::milliseconds connect_timeout() const {
    return std::chrono::milliseconds(int_or("socket.connection.setup.timeout.ms", 10000));
  }
  // Attempts after the first for a retriable error: with the backoff capped
  // at a second, about 7 s for a coordinator to load or a leader to be elected.
  int retries() const { return static_cast<int>(int_or("retries", 10)); }
  std::chrono::milliseconds retry_backoff() const { return std::chrono::milliseconds(int_or("retry.backoff.ms", 100)); }

  // A -X value, or `fallback`.
  std::string get(const std::string& key, const std::string& fallback) const;
  int64_t int_or(const std::string& key, int64_t fallback) const;
  bool is_set(const std::string& key) const { return values_.count(key) > 0; }

 private:
  std::vector<HostPort> bootstrap_;
  std::string client_id_ = "runnel-cli";
  std::map<std::string, std::string> values_;
};

// "host:port,host:port" (also "[::1]:9092"); UsageError when malformed.
std::vector<HostPort> parse_broker_list(const std::string& text);

// The option lines every client command accepts.
inline constexpr OptionSpec kBrokersOption{'b', "brokers", "HOST:PORT,...", "bootstrap servers (default $RUNNEL_BROKERS or 127.0.0.1:9092)"};
inline constexpr OptionSpec kConfigOption{'X', "config", "KEY=VALUE", "client config, Kafka's names (client.id, request.timeout.ms, ...)"};
inline constexpr OptionSpec kHelpOption{'h', "help", nullptr, "show this help"};

}  // namespace runnel::cli
