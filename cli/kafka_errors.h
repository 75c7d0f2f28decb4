// How the CLI reports failure: Kafka's error names and codes, a hint on what
// to do, and the exit code each kind of failure maps to.
//
//   0  ok
//   1  the cluster answered with a Kafka error (the message names it)
//   2  usage: unknown option, missing argument, malformed value
//   3  cannot connect: no bootstrap broker (or no leader's broker) reachable
//   4  `cluster health` found a partition without a leader or with a short ISR
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace runnel::cli {

enum ExitCode : int { kExitOk = 0, kExitKafkaError = 1, kExitUsage = 2, kExitCannotConnect = 3, kExitUnhealthy = 4 };

// Kafka's name for a wire error code ("TOPIC_ALREADY_EXISTS"), or "UNKNOWN".
const char* error_name(int16_t code);

// Whether Kafka's clients retry this error (a RetriableException): leadership
// moving, a coordinator loading, a timeout on the broker.
bool is_retriable(int16_t code);

// What a user can do about it, or "" when there is nothing useful to say.
const char* error_hint(int16_t code);

// A Kafka error the command cannot get past. what(): "NAME (code): context: message".
class KafkaError : public std::runtime_error {
 public:
  KafkaError(int16_t code, const std::string& context, const std::string& message = "");
  int16_t code() const { return code_; }

 private:
  int16_t code_;
};

// The command line itself is wrong.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// No broker to talk to: refused, unreachable, timed out, closed mid-request.
class ConnectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws KafkaError unless `code` is 0.
inline void check(int16_t code, const std::string& context, const std::string& message = "") {
  if (code != 0) throw KafkaError(code, context, message);
}

}  // namespace runnel::cli
