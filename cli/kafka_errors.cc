#include "cli/kafka_errors.h"

#include <algorithm>
#include <iterator>

namespace runnel::cli {

namespace {

struct NamedCode {
  int16_t code;
  const char* name;
};

// org.apache.kafka.common.protocol.Errors, by code.
constexpr NamedCode kNames[] = {
    {-1, "UNKNOWN_SERVER_ERROR"},
    {1, "OFFSET_OUT_OF_RANGE"},
    {2, "CORRUPT_MESSAGE"},
    {3, "UNKNOWN_TOPIC_OR_PARTITION"},
    {4, "INVALID_FETCH_SIZE"},
    {5, "LEADER_NOT_AVAILABLE"},
    {6, "NOT_LEADER_OR_FOLLOWER"},
    {7, "REQUEST_TIMED_OUT"},
    {8, "BROKER_NOT_AVAILABLE"},
    {9, "REPLICA_NOT_AVAILABLE"},
    {10, "MESSAGE_TOO_LARGE"},
    {11, "STALE_CONTROLLER_EPOCH"},
    {12, "OFFSET_METADATA_TOO_LARGE"},
    {13, "NETWORK_EXCEPTION"},
    {14, "COORDINATOR_LOAD_IN_PROGRESS"},
    {15, "COORDINATOR_NOT_AVAILABLE"},
    {16, "NOT_COORDINATOR"},
    {17, "INVALID_TOPIC_EXCEPTION"},
    {18, "RECORD_LIST_TOO_LARGE"},
    {19, "NOT_ENOUGH_REPLICAS"},
    {20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND"},
    {21, "INVALID_REQUIRED_ACKS"},
    {22, "ILLEGAL_GENERATION"},
    {23, "INCONSISTENT_GROUP_PROTOCOL"},
    {24, "INVALID_GROUP_ID"},
    {25, "UNKNOWN_MEMBER_ID"},
    {26, "INVALID_SESSION_TIMEOUT"},
    {27, "REBALANCE_IN_PROGRESS"},
    {28, "INVALID_COMMIT_OFFSET_SIZE"},
    {29, "TOPIC_AUTHORIZATION_FAILED"},
    {30, "GROUP_AUTHORIZATION_FAILED"},
    {31, "CLUSTER_AUTHORIZATION_FAILED"},
    {32, "INVALID_TIMESTAMP"},
    {33, "UNSUPPORTED_SASL_MECHANISM"},
    {34, "ILLEGAL_SASL_STATE"},
    {35, "UNSUPPORTED_VERSION"},
    {36, "TOPIC_ALREADY_EXISTS"},
    {37, "INVALID_PARTITIONS"},
    {38, "INVALID_REPLICATION_FACTOR"},
    {39, "INVALID_REPLICA_ASSIGNMENT"},
    {40, "INVALID_CONFIG"},
    {41, "NOT_CONTROLLER"},
    {42, "INVALID_REQUEST"},
    {43, "UNSUPPORTED_FOR_MESSAGE_FORMAT"},
    {44, "POLICY_VIOLATION"},
    {45, "OUT_OF_ORDER_SEQUENCE_NUMBER"},
    {46, "DUPLICATE_SEQUENCE_NUMBER"},
    {47, "INVALID_PRODUCER_EPOCH"},
    {48, "INVALID_TXN_STATE"},
    {49, "INVALID_PRODUCER_ID_MAPPING"},
    {50, "INVALID_TRANSACTION_TIMEOUT"},
    {51, "CONCURRENT_TRANSACTIONS"},
    {52, "TRANSACTION_COORDINATOR_FENCED"},
    {53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"},
    {54, "SECURITY_DISABLED"},
    {55, "OPERATION_NOT_ATTEMPTED"},
    {56, "KAFKA_STORAGE_ERROR"},
    {57, "LOG_DIR_NOT_FOUND"},
    {58, "SASL_AUTHENTICATION_FAILED"},
    {59, "UNKNOWN_PRODUCER_ID"},
    {60, "REASSIGNMENT_IN_PROGRESS"},
    {61, "DELEGATION_TOKEN_AUTH_DISABLED"},
    {62, "DELEGATION_TOKEN_NOT_FOUND"},
    {63, "DELEGATION_TOKEN_OWNER_MISMATCH"},
    {64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"},
    {65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED"},
    {66, "DELEGATION_TOKEN_EXPIRED"},
    {67, "INVALID_PRINCIPAL_TYPE"},
    {68, "NON_EMPTY_GROUP"},
    {69, "GROUP_ID_NOT_FOUND"},
    {70, "FETCH_SESSION_ID_NOT_FOUND"},
    {71, "INVALID_FETCH_SESSION_EPOCH"},
    {72, "LISTENER_NOT_FOUND"},
    {73, "TOPIC_DELETION_DISABLED"},
    {74, "FENCED_LEADER_EPOCH"},
    {75, "UNKNOWN_LEADER_EPOCH"},
    {76, "UNSUPPORTED_COMPRESSION_TYPE"},
    {77, "STALE_BROKER_EPOCH"},
    {78, "OFFSET_NOT_AVAILABLE"},
    {79, "MEMBER_ID_REQUIRED"},
    {80, "PREFERRED_LEADER_NOT_AVAILABLE"},
    {81, "GROUP_MAX_SIZE_REACHED"},
    {82, "FENCED_INSTANCE_ID"},
    {83, "ELIGIBLE_LEADERS_NOT_AVAILABLE"},
    {84, "ELECTION_NOT_NEEDED"},
    {85, "NO_REASSIGNMENT_IN_PROGRESS"},
    {86, "GROUP_SUBSCRIBED_TO_TOPIC"},
    {87, "INVALID_RECORD"},
    {88, "UNSTABLE_OFFSET_COMMIT"},
    {89, "THROTTLING_QUOTA_EXCEEDED"},
    {90, "PRODUCER_FENCED"},
    {91, "RESOURCE_NOT_FOUND"},
    {92, "DUPLICATE_RESOURCE"},
    {93, "UNACCEPTABLE_CREDENTIAL"},
    {94, "INCONSISTENT_VOTER_SET"},
    {95, "INVALID_UPDATE_VERSION"},
    {96, "FEATURE_UPDATE_FAILED"},
    {97, "PRINCIPAL_DESERIALIZATION_FAILURE"},
    {98, "SNAPSHOT_NOT_FOUND"},
    {99, "POSITION_OUT_OF_RANGE"},
    {100, "UNKNOWN_TOPIC_ID"},
    {101, "DUPLICATE_BROKER_REGISTRATION"},
    {102, "BROKER_ID_NOT_REGISTERED"},
    {103, "INCONSISTENT_TOPIC_ID"},
    {104, "INCONSISTENT_CLUSTER_ID"},
    {105, "TRANSACTIONAL_ID_NOT_FOUND"},
    {106, "FETCH_SESSION_TOPIC_ID_ERROR"},
    {107, "INELIGIBLE_REPLICA"},
    {108, "NEW_LEADER_ELECTED"},
    {109, "OFFSET_MOVED_TO_TIERED_STORAGE"},
    {110, "FENCED_MEMBER_EPOCH"},
    {111, "UNRELEASED_INSTANCE_ID"},
    {112, "UNSUPPORTED_ASSIGNOR"},
    {113, "STALE_MEMBER_EPOCH"},
    {114, "MISMATCHED_ENDPOINT_TYPE"},
    {115, "UNSUPPORTED_ENDPOINT_TYPE"},
    {116, "UNKNOWN_CONTROLLER_ID"},
    {117, "UNKNOWN_SUBSCRIPTION_ID"},
    {118, "TELEMETRY_TOO_LARGE"},
    {119, "INVALID_REGISTRATION"},
    {120, "TRANSACTION_ABORTABLE"},
};

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
  auto it = std::find_if(std::begin(kNames), std::end(kNames), [&](const NamedCode& n) { return n.code == code; });
  return it == std::end(kNames) ? "UNKNOWN" : it->name;
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
