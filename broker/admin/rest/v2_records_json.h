// REST Proxy v2's produce body and answer, for its two schemaless embedded
// formats (the Content-Type names one):
//
//   application/vnd.kafka.binary.v2+json  key and value are base64 strings
//   application/vnd.kafka.json.v2+json    key and value are any JSON
//
//   request  {"records": [{"key": ..., "value": ..., "partition": 0}, ...]}
//            key, value and partition optional (null: null, partitioner)
//   answer   {"offsets": [{"partition": 0, "offset": 5, "error_code": null,
//                          "error": null}, ...],
//             "key_schema_id": null, "value_schema_id": null}
//            a record that failed: partition and offset null, error_code 1
//            (a Kafka error the producer does not retry) or 2 (one it does),
//            error the message.
// A body that parses but is not that is 422; schema fields are ignored
// (the binary and json formats have no schema).
#pragma once

#include <string>
#include <variant>
#include <vector>

#include <boost/json/value.hpp>

#include "broker/admin/rest/rest_error.h"
#include "broker/admin/rest/rest_record.h"

namespace runnel::broker::admin::rest {

enum class EmbeddedFormat { binary, json };

std::variant<std::vector<RestRecord>, RestError> parse_v2_records(const boost::json::value& body, EmbeddedFormat format);

std::string v2_produce_answer(const std::vector<RecordOutcome>& outcomes);

}  // namespace runnel::broker::admin::rest
