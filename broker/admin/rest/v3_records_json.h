// REST Proxy v3's produce record and delivery report, as JSON:
//
//   request  {"partition_id": 1,                      optional, null: partitioner
//             "headers": [{"name": "h", "value": "<base64>"|null}],
//             "key":   {"type": "BINARY"|"JSON"|"STRING", "data": ...},
//             "value": {"type": ..., "data": ...},   either optional
//             "timestamp": "2024-05-01T12:00:00.123Z"} optional, null: now
//   BINARY data is base64, STRING a string (its UTF-8 bytes), JSON any JSON
//   (its compact serialisation); data null or absent is a null key/value.
//   AVRO, PROTOBUF and JSONSCHEMA need a schema registry, which Runnel has
//   not, and a missing type is refused for the same reason (REST Proxy
//   would take the schema from the registry).
//
//   report   {"error_code": 200, "cluster_id", "topic_name", "partition_id",
//             "offset", "timestamp", "key": {"type", "size"}, "value": {...}}
//   key and value only where the request had them; an error is
//   {"error_code": N, "message": "..."} in the record's place.
#pragma once

#include <string>
#include <string_view>
#include <variant>

#include <boost/json/value.hpp>

#include "broker/admin/rest/rest_error.h"
#include "broker/admin/rest/rest_record.h"

namespace runnel::broker::admin::rest {

std::variant<RestRecord, RestError> parse_v3_record(const boost::json::value& json);

std::string v3_delivery_report(std::string_view cluster_id, std::string_view topic, const RestRecord& record,
                               const RecordOutcome& outcome);

}  // namespace runnel::broker::admin::rest
