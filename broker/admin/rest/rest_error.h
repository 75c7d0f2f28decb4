// REST Proxy's error answers: a JSON body {"error_code":N,"message":"..."}
// whose HTTP status is N, or N / 100 for its five-digit codes (40401 is a
// 404). The codes Runnel answers, as Confluent documents them:
//   400 bad request (malformed JSON, bad base64, a bad field)
//   404 unknown path;  40401 topic not found;  40402 partition not found;
//   404 (v3) cluster not found
//   405 method not allowed;  406 not acceptable (v2 Accept)
//   413 request body too large;  415 unsupported media type
//   422 unprocessable entity (v2: a body that parses but is not a produce request)
//   40301 not authorized (the topic's WRITE or CREATE is refused)
//   50002 a Kafka error;  50003 a retriable Kafka error
//   500 internal error.
#pragma once

#include <string>
#include <string_view>

#include "protocol/error_codes.h"

namespace runnel::broker::admin::rest {

struct RestError {
  int error_code = 500;
  std::string message;

  unsigned http_status() const { return error_code >= 1000 ? error_code / 100 : error_code; }
  std::string to_json() const;
};

namespace errors {
inline RestError not_found() { return {404, "HTTP 404 Not Found"}; }
inline RestError method_not_allowed() { return {405, "HTTP 405 Method Not Allowed"}; }
inline RestError not_acceptable() { return {406, "HTTP 406 Not Acceptable"}; }
inline RestError unsupported_media_type() { return {415, "HTTP 415 Unsupported Media Type"}; }
inline RestError topic_not_found() { return {40401, "Topic not found."}; }
inline RestError partition_not_found() { return {40402, "Partition not found."}; }
RestError cluster_not_found(std::string_view cluster_id);
RestError bad_request(std::string_view why);
RestError too_large(size_t limit);
}  // namespace errors

// Whether the Kafka producer retries this error (a RetriableException).
bool retriable(protocol::ErrorCode code);
// A Kafka error a produce came back with, as REST Proxy reports it.
RestError from_kafka(protocol::ErrorCode code, std::string_view topic, std::string_view message = {});

}  // namespace runnel::broker::admin::rest
