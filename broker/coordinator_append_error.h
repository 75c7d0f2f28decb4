#pragma once
// What a coordinator answers when the append of its own records fails: the
// same mapping in Kafka's two coordinators (TransactionStateManager's
// appendTransactionToLog, GroupCoordinatorService.handleOperationException).
// A partition that is gone or short of replicas, or a write that timed out,
// may come back: COORDINATOR_NOT_AVAILABLE, retried. A partition this broker
// no longer leads, or whose disk failed: NOT_COORDINATOR, find it again.
#include "protocol/error_codes.h"

namespace runnel::broker {

inline protocol::ErrorCode coordinator_append_error(protocol::ErrorCode e) {
  using protocol::ErrorCode;
  switch (e) {
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
    case ErrorCode::request_timed_out:
      return ErrorCode::coordinator_not_available;
    case ErrorCode::not_leader_or_follower:
    case ErrorCode::kafka_storage_error:
      return ErrorCode::not_coordinator;
    case ErrorCode::message_too_large:
    case ErrorCode::record_list_too_large:
      return ErrorCode::unknown_server_error;
    default:
      return e;
  }
}

}  // namespace runnel::broker
