// Why a record batch was refused, as the Kafka error code a Produce response
// carries plus a message for its error_message field and the logs.
//
// CORRUPT_MESSAGE: the bytes are damaged (framing, magic, CRC, compressed
// payload). INVALID_RECORD: the batch is intact but breaks a rule (offsets,
// counts, malformed records, control batches from clients).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/error_codes.h"

namespace runnel::protocol::records {

// One refused record of an otherwise readable batch (KIP-467): its index in
// the batch and why, so a client fails exactly those records.
struct RecordError {
  int32_t batch_index = 0;
  std::string message;
};

struct BatchStatus {
  ErrorCode code = ErrorCode::none;
  std::string message;
  std::vector<RecordError> record_errors;  // the records at fault, when the rule is per record

  bool ok() const { return code == ErrorCode::none; }
  static BatchStatus corrupt(std::string why) { return {ErrorCode::corrupt_message, std::move(why), {}}; }
  static BatchStatus invalid(std::string why) { return {ErrorCode::invalid_record, std::move(why), {}}; }
};

}  // namespace runnel::protocol::records
