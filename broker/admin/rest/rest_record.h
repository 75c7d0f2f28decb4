// One record as the REST endpoints receive it, decoded from whichever
// embedded format carried it (BINARY base64, JSON, STRING, or a raw body),
// and what producing it came to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace runnel::broker::admin::rest {

struct RestHeader {
  std::string name;
  std::optional<std::string> value;  // nullopt: a null header value
};

struct RestRecord {
  std::optional<std::string> key;    // bytes; nullopt: a null key
  std::optional<std::string> value;  // bytes; nullopt: a null value (a tombstone)
  std::vector<RestHeader> headers;
  std::optional<int32_t> partition;     // nullopt: the producer's partitioner picks
  std::optional<int64_t> timestamp_ms;  // nullopt: now
  // The v3 data types named in the request ("BINARY", "JSON", "STRING"),
  // echoed in its delivery report; empty where the key or value is absent.
  std::string key_type;
  std::string value_type;
};

// What became of one record: appended at `offset` of `partition`, or an
// error in REST Proxy's terms (rest_error.h).
struct RecordOutcome {
  int32_t partition = -1;
  int64_t offset = -1;
  int64_t timestamp_ms = -1;  // the create time given or taken, or the log append time
  int error_code = 0;         // 0: appended; else REST Proxy's error_code
  std::string message;
  bool retriable = false;  // the Kafka error behind error_code is retriable (v2 reports 2, else 1)
};

}  // namespace runnel::broker::admin::rest
