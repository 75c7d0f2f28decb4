#include "cli/kafka_errors.h"

#include <algorithm>
#include <iterator>

#include "protocol/error_codes.h"

namespace runnel::cli {

namespace {

struct Hint {
  int16_t code;
  const char* text;
};

constexpr Hint kHints[] = {
    {3, "check the topic name and partition with `runnel topic list` / `runnel topic describe`"},
    {5, "a leader election is under way; try again in a moment"},
    {6, "leadership moved; try again (the CLI already retried)"},
    {7, "the broker timed out; raise -X request.timeout.ms or check the broker"},
    {10, "the batch exceeds the topic's max.message.bytes; send smaller records or raise it"},
    {15, "the group coordinator is not available yet; try again"},
    {17, "topic names use only [a-zA-Z0-9._-], at most 249 characters, and not '.' or '..'"},
    {19, "fewer in-sync replicas than the topic's min.insync.replicas; check `runnel cluster health`"},
    {29, "this principal may not use the topic; ask for an ACL"},
    {30, "this principal may not use the group; ask for an ACL"},
    {31, "this principal lacks a cluster ACL for this operation"},
    {35, "the broker does not support a version this CLI speaks"},
    {36, "choose another name, or see the existing topic with `runnel topic describe NAME`"},
    {37, "the partition count must be positive, and add-partitions can only grow it"},
    {38, "the replication factor must be at least 1 and at most the broker count (`runnel cluster info`)"},
    {40, "check the config name and value against Kafka's topic configs"},
    {41, "the controller moved; try again"},
    {44, "a create-topic policy on the broker refused it"},
    {68, "the group still has members; stop its consumers first"},
    {69, "no such group; see `runnel group list`"},
    {73, "the broker has delete.topic.enable=false"},
    {76, "the broker cannot use this compression codec"},
};

}  // namespace

const char* error_name(int16_t code) {
  const char* name = protocol::error_name(static_cast<protocol::ErrorCode>(code));
  return name ? name : "UNKNOWN";
}

bool is_retriable(int16_t code) {
  switch (code) {
    case 2: case 3: case 5: case 6: case 7: case 13: case 14: case 15: case 16: case 19: case 20:
    case 41: case 56: case 74: case 75: case 78: case 89: case 100:
      return true;
    default:
      return false;
  }
}

const char* error_hint(int16_t code) {
  auto it = std::find_if(std::begin(kHints), std::end(kHints), [&](const Hint& h) { return h.code == code; });
  return it == std::end(kHints) ? "" : it->text;
}

static std::string describe(int16_t code, const std::string& context, const std::string& message) {
  std::string s = std::string(error_name(code)) + " (" + std::to_string(code) + "): " + context;
  if (!message.empty()) s += ": " + message;
  return s;
}

KafkaError::KafkaError(int16_t code, const std::string& context, const std::string& message)
    : std::runtime_error(describe(code, context, message)), code_(code) {}

}  // namespace runnel::cli
