#include "broker/admin/rest/rest_error.h"

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace runnel::broker::admin::rest {

using protocol::ErrorCode;

std::string RestError::to_json() const {
  boost::json::object o;
  o["error_code"] = error_code;
  o["message"] = message;
  return boost::json::serialize(o);
}

namespace errors {
RestError cluster_not_found(std::string_view cluster_id) {
  return {404, "Cluster " + std::string(cluster_id) + " cannot be found."};
}
RestError bad_request(std::string_view why) { return {400, "Bad Request: " + std::string(why)}; }
RestError too_large(size_t limit) {
  return {413, "Request Entity Too Large: the body is over " + std::to_string(limit) + " bytes"};
}
}  // namespace errors

bool retriable(ErrorCode code) {
  switch (code) {
    case ErrorCode::corrupt_message:
    case ErrorCode::unknown_topic_or_partition:
    case ErrorCode::leader_not_available:
    case ErrorCode::not_leader_or_follower:
    case ErrorCode::request_timed_out:
    case ErrorCode::network_exception:
    case ErrorCode::not_enough_replicas:
    case ErrorCode::not_enough_replicas_after_append:
    case ErrorCode::kafka_storage_error: return true;
    default: return false;
  }
}

namespace {

// Kafka's own words for the errors a produce meets (Errors.java's messages).
std::string_view kafka_words(ErrorCode code) {
  switch (code) {
    case ErrorCode::corrupt_message: return "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.";
    case ErrorCode::unknown_topic_or_partition: return "This server does not host this topic-partition.";
    case ErrorCode::leader_not_available: return "There is no leader for this topic-partition as we are in the middle of a leadership election.";
    case ErrorCode::not_leader_or_follower: return "For requests intended only for the leader, this error indicates that the broker is not the current leader.";
    case ErrorCode::request_timed_out: return "The request timed out.";
    case ErrorCode::message_too_large: return "The request included a message larger than the max message size the server will accept.";
    case ErrorCode::record_list_too_large: return "The request included message batch larger than the configured segment size on the server.";
    case ErrorCode::not_enough_replicas: return "Messages are rejected since there are fewer in-sync replicas than required.";
    case ErrorCode::not_enough_replicas_after_append: return "Messages are written to the log, but to fewer in-sync replicas than required.";
    case ErrorCode::invalid_timestamp: return "The timestamp of the message is out of acceptable range.";
    case ErrorCode::kafka_storage_error: return "Disk error when trying to access log file on the disk.";
    case ErrorCode::invalid_record: return "This record has failed the validation on broker and hence will be rejected.";
    case ErrorCode::invalid_topic_exception: return "The request attempted to perform an operation on an invalid topic.";
    default: return "Unexpected error.";
  }
}

}  // namespace

RestError from_kafka(ErrorCode code, std::string_view topic, std::string_view message) {
  if (code == ErrorCode::topic_authorization_failed)
    return {40301, "Not authorized to access topics: [" + std::string(topic) + "]"};
  std::string text = message.empty() ? std::string(kafka_words(code)) : std::string(message);
  return {retriable(code) ? 50003 : 50002, "Kafka error: " + text};
}

}  // namespace runnel::broker::admin::rest
